/* args.c — the command line: usage text, options, and how model text is
 * shown on a terminal. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cli_usage[] =
    "usage: onnx2c-caten [compile] MODEL.onnx [-o DIR] [--name PREFIX] [options]\n"
    "       onnx2c-caten run MODEL.onnx -i IN.pb... [-o OUTDIR] [--expect OUT.pb...]\n"
    "       onnx2c-caten run MODEL.onnx --data-set DIR... [-o OUTDIR]\n"
    "       onnx2c-caten verify MODEL.onnx [-i IN.pb...] [--seed N] [--sym NAME=VALUE...]\n"
    "\n"
    "compile  writes DIR/PREFIX.c, PREFIX.h and PREFIX.weights (default: ./PREFIX.*)\n"
    "run      compiles into a temporary directory, builds with the C compiler, runs\n"
    "         on the inputs and writes OUTDIR/output_K.pb; with --expect, compares\n"
    "         each output (floats |a-b| <= atol + rtol|b|, integers and bools\n"
    "         exactly) and fails on a mismatch. Outputs and arena start poisoned\n"
    "         (NaN, 0xA5 bytes) and must fit --max-memory. With --data-set, the\n"
    "         one shared object runs on every data set in turn\n"
    "verify   runs the model and onnxruntime on the same inputs (random with a\n"
    "         fixed seed when none are given) and prints PASS/FAIL per output\n"
    "\n"
    "Symbolic input dimensions (ONNX dim_param: batch, seq...) stay symbols: the\n"
    "generated entry function takes their values as arguments, and run/verify\n"
    "read them off the input tensors' shapes. --dim pins one instead. Where the\n"
    "model needs a dimension or an input's values fixed (an op without symbolic\n"
    "support, a shape computed from an input), run and verify take them from\n"
    "their inputs (one line on stderr says what); compile names them all.\n"
    "Where the compiled code refuses the inputs' dimensions (a case assumed\n"
    "away, e.g. a Slice's end inside a symbolic axis: the entry checks it),\n"
    "run and verify build it again for those dimensions, saying so.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR        output directory (compile, run)\n"
    "  -n, --name PREFIX       symbol prefix and file stem (default: model)\n"
    "  -i, --input FILE        an input tensor (.pb); repeat in input order\n"
    "  -e, --expect FILE       an expected output tensor (.pb) for run\n"
    "  -d, --dim NAME=VALUE    pin symbolic dimension NAME to VALUE: the code is\n"
    "                          compiled for that size only (repeatable)\n"
    "      --data-set DIR      run: inputs DIR/input_J.pb, expected outputs\n"
    "                          DIR/output_J.pb (the ONNX test layout); repeatable,\n"
    "                          one compile for all (outputs to OUTDIR/K/ then)\n"
    "      --sym NAME=VALUE    verify: the value of symbol NAME for the random\n"
    "                          inputs (the model stays compiled symbolically)\n"
    "      --freeze [NAME=]FILE.pb  fix graph input NAME (default: the tensor's\n"
    "                          name) to the constant in FILE: specialises the model\n"
    "      --seq NAME=SHAPES   the elements' shapes of sequence or optional input\n"
    "                          NAME, e.g. x=[2,3],[4] (x= empty, x=none an empty\n"
    "                          optional): the entry takes each element as the\n"
    "                          tensor NAME[K]; run takes them from its inputs\n"
    "      --dump WHAT         print to stderr: ir-lowered (primitives as lowered),\n"
    "                          ir (after rewrites) or schedule (kernels, loop nests);\n"
    "                          dot=FILE writes the kernel graph for Graphviz\n"
    "      --embed-weights     compile: also PREFIX_weights.c, the weights as the\n"
    "                          array PREFIX_weights linked into the program (flash)\n"
    "      --report FILE.json  per kernel: the ONNX nodes it fuses, loop nest, FLOPs,\n"
    "                          bytes read and written, arena offset and size; totals\n"
    "                          (-v prints it as a table)\n"
    "      --no-rewrite        keep Gather as the O(V) one-hot reduction\n"
    "      --no-fuse           one primitive per kernel (debugging)\n"
    "      --no-tile           matmuls as one dot product per output: no register\n"
    "                          blocks, packed weight panels or transposed keys\n"
    "      --no-kslice         register blocks sum over all of k at once (no slices\n"
    "                          of k sized for L1; for comparisons)\n"
    "      --no-collapse       every axis its own loop (no collapse of outer loops\n"
    "                          that index every access contiguously; comparisons)\n"
    "      --no-winograd       3x3 convolutions as direct sums only (otherwise\n"
    "                          Winograd's F(2x2,3x3) where it measured faster: 48+\n"
    "                          channels, maps over 12x12)\n"
    "      --target T          the CPU to tune for (register blocks, cache sizes):\n"
    "                          native (default: this machine), x86-64-v2, x86-64-v3,\n"
    "                          x86-64-v4 (AVX-512), aarch64 (NEON) or generic; the\n"
    "                          generated C's first lines name it and the flags to\n"
    "                          build it with\n"
    "      --threads N         a pool of N threads (POSIX threads, C11 atomics)\n"
    "                          over the outer loop of large kernels (build the C\n"
    "                          with -pthread; run does): those estimated at 20 us\n"
    "                          or more on one core\n"
    "      --threads-all       with --threads: every kernel, however small\n"
    "                          (to test the threaded code)\n"
    "      --cflags FLAGS      C compiler flags for run/verify (default: -O2\n"
    "                          -march=native, -O2 with a --target other than native),\n"
    "                          then -std=c11 unless FLAGS name a -std=\n"
    "      --max-memory SIZE   refuse models whose tensors, constants, decoded file\n"
    "                          or graph need more (e.g. 512M, 2G; default: RAM)\n"
    "      --seed N            seed of verify's random inputs (default: 1)\n"
    "      --atol X, --rtol X  float tolerances of run --expect and verify: |a-b| <=\n"
    "                          atol + rtol|b| (defaults 1e-5 and 1e-3)\n"
    "  -v, --verbose           per-stage timing on stderr\n"
    "  -h, --help              this text\n"
    "      --version           print the version\n";


/* Model text (names in messages, output names) as printed to a terminal:
 * control bytes and backslashes as \xNN, so a message stays one line and a
 * name cannot send escape sequences. Returns `buf`. */
const char *cli_shown(const char *s, char *buf, size_t n) {
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && k + 5 < n; p++)
    k += (size_t)(*p < 0x20 || *p == 0x7f || *p == '\\' ? snprintf(buf + k, n - k, "\\x%02x", *p)
                                                        : snprintf(buf + k, n - k, "%c", *p));
  buf[k] = 0;
  return buf;
}

int cli_die(const char *msg) {
  char s[4096];
  fprintf(stderr, "onnx2c-caten: %s\n", cli_shown(msg, s, sizeof s));
  return 1;
}

int cli_parse(int argc, char **argv, cli_args *a) {
  static const struct option longopts[] = {
      {"output", required_argument, 0, 'o'}, {"name", required_argument, 0, 'n'},
      {"input", required_argument, 0, 'i'},  {"expect", required_argument, 0, 'e'},
      {"dim", required_argument, 0, 'd'},    {"dump", required_argument, 0, 'D'},
      {"no-fuse", no_argument, 0, 'F'},      {"cflags", required_argument, 0, 'C'},
      {"seed", required_argument, 0, 'S'},   {"verbose", no_argument, 0, 'v'},
      {"freeze", required_argument, 0, 'Z'},  {"no-rewrite", no_argument, 0, 'R'},
      {"atol", required_argument, 0, 'A'},    {"rtol", required_argument, 0, 'T'},
      {"threads", required_argument, 0, 'j'},  {"max-memory", required_argument, 0, 'M'},
      {"no-tile", no_argument, 0, 'B'}, {"embed-weights", no_argument, 0, 'W'}, {"report", required_argument, 0, 'P'},       {"data-set", required_argument, 0, 'X'},
      {"sym", required_argument, 0, 'Y'},     {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},       {"target", required_argument, 0, 'G'},
      {"no-kslice", no_argument, 0, 'K'},     {"threads-all", no_argument, 0, 'L'},
      {"seq", required_argument, 0, 'Q'},     {"no-collapse", no_argument, 0, 'U'},
      {"no-winograd", no_argument, 0, 'O'},
      {0, 0, 0, 0}};
  a->seed = 1;
  a->atol = 1e-5;
  a->rtol = 1e-3;
  int c;
  while ((c = getopt_long(argc, argv, "o:n:i:e:d:vh", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': a->outdir = optarg; break;
    case 'n': a->rt.name = optarg; break;
    case 'i':
      if (a->nin == MAX_FILES) return cli_die("too many inputs"), -1;
      a->inputs[a->nin++] = optarg;
      break;
    case 'e':
      if (a->nexp == MAX_FILES) return cli_die("too many expected outputs"), -1;
      a->expects[a->nexp++] = optarg;
      break;
    case 'd':
      if (a->ndims == MAX_FILES || !strchr(optarg, '=')) return cli_die("--dim takes NAME=VALUE"), -1;
      a->dims[a->ndims++] = optarg;
      break;
    case 'D':
      if (strcmp(optarg, "ir") && strcmp(optarg, "ir-lowered") && strcmp(optarg, "schedule") &&
          strncmp(optarg, "dot=", 4))
        return cli_die("--dump takes ir-lowered, ir, schedule or dot=FILE"), -1;
      a->rt.dump = optarg;
      break;
    case 'X':
      if (a->nsets == MAX_FILES) return cli_die("too many --data-set"), -1;
      a->sets[a->nsets++] = optarg;
      break;
    case 'Y':
      if (a->nsyms == MAX_FILES || !strchr(optarg, '=')) return cli_die("--sym takes NAME=VALUE"), -1;
      a->syms[a->nsyms++] = optarg;
      break;
    case 'Q':
      if (a->nvalues == MAX_FILES || !strchr(optarg, '=')) return cli_die("--seq takes NAME=SHAPES"), -1;
      a->values[a->nvalues++] = optarg;
      break;
    case 'Z':
      if (a->nfreeze == MAX_FILES) return cli_die("too many --freeze"), -1;
      a->freeze[a->nfreeze++] = optarg;
      break;
    case 'F': a->rt.sched.no_fuse = true; break;
    case 'B': a->rt.sched.no_tile = true; break;
    case 'K': a->rt.sched.no_kslice = true; break;
    case 'U': a->rt.sched.no_collapse = true; break;
    case 'O': a->rt.imp.no_winograd = true; break;
    case 'L': a->rt.threads_all = true; break;
    case 'W': a->rt.embed_weights = true; break;
    case 'P': a->rt.report = optarg; break;
    case 'G': {
      char err[256];
      if (sched_target_get(optarg, &a->rt.sched.target, err, sizeof err)) return cli_die(err), -1;
      break;
    }
    case 'R': a->rt.no_rewrite = true; break;
    case 'A': a->atol = strtod(optarg, NULL); break;
    case 'M': {
      char *end;
      double v = strtod(optarg, &end);
      double unit = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1;
      if (unit != 1) end++;
      if (end == optarg || *end || v <= 0) return cli_die("--max-memory takes a size such as 512M or 2G"), -1;
      imp_set_mem_limit((size_t)(v * unit));
      break;
    }
    case 'j':
      a->rt.threads = atoi(optarg);
      if (a->rt.threads < 1 || a->rt.threads > 1024) return cli_die("--threads takes 1..1024"), -1;
      break;
    case 'T': a->rtol = strtod(optarg, NULL); break;
    case 'C': a->cflags = optarg; break;
    case 'S': a->seed = (unsigned)strtoul(optarg, NULL, 10); break;
    case 'v': a->rt.verbose = true; break;
    case 'h': fputs(cli_usage, stdout); exit(0);
    case 'V': printf("onnx2c-caten %s\n", ONNX2C_VERSION); exit(0);
    default: fputs(cli_usage, stderr); return -1;
    }
  }
  int k = optind;
  if (k < argc && (!strcmp(argv[k], "compile") || !strcmp(argv[k], "run") || !strcmp(argv[k], "verify")))
    a->cmd = argv[k++];
  else a->cmd = "compile";
  if (k >= argc) return fputs(cli_usage, stderr), -1;
  a->model = argv[k++];
  if (k < argc) return cli_die("too many arguments (options go before or after MODEL, files with -i)"), -1;
  a->rt.imp.dims = a->dims;
  a->rt.imp.ndims = a->ndims;
  a->rt.imp.freeze = a->freeze;
  a->rt.imp.nfreeze = a->nfreeze;
  a->rt.imp.values = a->values;
  a->rt.imp.nvalues = a->nvalues;
  sched_target t = a->rt.sched.target; /* empty: native, as the scheduler takes it */
  char err[256];
  if (!t.name[0] && sched_target_get("native", &t, err, sizeof err)) return cli_die(err), -1;
  /* run and verify build the C for this host's ISA, which `native` shaped
   * it for (its register blocks built without -march ran as SSE2: an int8
   * segmentation net took 137 s against 4.1 with the speed flags); at -O2,
   * which gcc builds faster than the speed flags' -O3 + omp simd (the OCR
   * detector's 1.5 MB of C: 18 against 41 s, Zen 5). The C of another
   * target is only checked here: -O2. */
  if (!a->cflags) a->cflags = strcmp(t.name, "native") ? "-O2" : "-O2 -march=native";
  a->rt.imp.vector_floats = sched_target_lanes(&t);
  a->rt.imp.vector_regs = t.vector_regs;
  a->rt.imp.threads = a->rt.threads;
  return 0;
}

