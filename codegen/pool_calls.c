/* pool_calls.c — the C text that decides, call by call, whether a model's
 * loops run threaded or all on the calling thread (printed after pool.c's
 * text into files whose entry threads loops; program.c).
 *
 * Why whole calls: the pool's own rule (o2c_pool_learn) compares a loop
 * threaded with the same loop alone, both inside threaded calls, where half
 * of every input was written by the other core. On two cores that share no
 * cache that transfer is what threads lose, and a loop alone pays it too,
 * so the comparison does not see it: MobileNetV3-small (71 loops of 5-90
 * us) ran slower at 2 threads than at 1 in bench runs on Zen 5 (EPYC
 * family 26 model 2: 1.452 against 1.365 ms, 2026-12-05 23:54). A call
 * with every loop on the caller keeps all data on one core, as a 1-thread
 * build does. So the entry times whole calls in a probe, two threaded then
 * two alone, three times (the first call of each pair warms the caches for
 * its mode, the second is timed), and runs the faster mode until the next
 * probe, 32 calls later, doubling while the choice holds (up to 4096); 128
 * and quadrupling when one mode was a quarter faster or more. A first call
 * alone half as slow again as the best threaded one ends the probe (threads
 * win by far: ResNet-18, CRNN), so such a model pays one call alone a
 * probe, 4 probes in its first 3000 calls. Calls of 20 ms or more are not
 * probed (a 1.1B LLaMA decode step: steps alone would be a generation's
 * first tokens, and a bench row's runs); their loops are long enough for
 * the pool's own rule. Only one thread at a time measures (a second
 * caller runs in the current mode); a call that returned an error is not
 * counted. -DO2C_POOL_CALLS=0 keeps every call threaded. */
#include "codegen_impl.h"

const char cg_pool_calls_src[] =
    "/* A call's loops run threaded, or all on the caller when whole calls ran\n"
    " * faster that way in the last probe (threaded and alone in turn). */\n"
    "#ifndef O2C_POOL_CALLS\n"
    "#define O2C_POOL_CALLS 1\n"
    "#endif\n"
    "#ifndef O2C_CALLS_HOLD\n"
    "#define O2C_CALLS_HOLD 32 /* calls between probes, doubling while the choice holds */\n"
    "#endif\n"
    "#ifndef O2C_CALLS_HOLD_MAX\n"
    "#define O2C_CALLS_HOLD_MAX 4096\n"
    "#endif\n"
    "#ifndef O2C_CALLS_LONG\n"
    "#define O2C_CALLS_LONG 20e-3 /* s: calls this long are not probed */\n"
    "#endif\n"
    "#define O2C_CALLS_PROBE 12 /* 3 x (2 threaded, 2 alone): the second of each pair timed */\n"
    "#ifdef O2C_POOL_THREADS\n"
    "static struct {\n"
    "  atomic_flag busy; /* a call is being measured */\n"
    "  int64_t n, next, hold; /* calls measured; the next probe's first; calls between probes */\n"
    "  int choice;            /* the last probe's: 1 alone */\n"
    "  double t0, best[2];    /* this call's start; the probe's best threaded, alone */\n"
    "} o2c_calls = {.busy = ATOMIC_FLAG_INIT, .next = 2};\n"
    "\n"
    "/* Before a call: its mode; whether this caller measures it. */\n"
    "static int o2c_pool_call_begin(void) {\n"
    "  if (!O2C_POOL_CALLS || atomic_flag_test_and_set_explicit(&o2c_calls.busy, memory_order_acquire))\n"
    "    return 0;\n"
    "  int64_t p = o2c_calls.n - o2c_calls.next;\n"
    "  if (p >= 0 && p < O2C_CALLS_PROBE)\n"
    "    atomic_store_explicit(&o2c_pool.solo, (int)(p / 2 % 2), memory_order_relaxed);\n"
    "  o2c_calls.t0 = o2c_pool_now();\n"
    "  return 1;\n"
    "}\n"
    "\n"
    "/* After a call begun by o2c_pool_call_begin (`mine` its result; `ok`: no\n"
    " * error): the probe's timing, and at its end the mode until the next. */\n"
    "static void o2c_pool_call_end(int mine, int ok) {\n"
    "  if (!mine) return;\n"
    "  double t = o2c_pool_now() - o2c_calls.t0;\n"
    "  int64_t p = o2c_calls.n++ - o2c_calls.next;\n"
    "  int m = (int)(p / 2 % 2);\n"
    "  /* a long call (its loops long too) is not probed: a probe's calls alone\n"
    "   * would cost seconds, or a generation's first tokens */\n"
    "  if (p == -1 && ok && t > O2C_CALLS_LONG) o2c_calls.next = INT64_MAX;\n"
    "  if (ok && p >= 0 && p < O2C_CALLS_PROBE && p % 2 == 1 && (!o2c_calls.best[m] || t < o2c_calls.best[m]))\n"
    "    o2c_calls.best[m] = t > 0 ? t : 1e-12;\n"
    "  /* a call alone (the first of its pair) half as slow again as the best\n"
    "   * threaded one ends the probe: threads win by far, and the probe costs\n"
    "   * one call alone, not six (the 1.1B int4 decode step: 24 ms alone, 15\n"
    "   * threaded) */\n"
    "  int lost = ok && p >= 0 && p < O2C_CALLS_PROBE && p % 4 == 2 && o2c_calls.best[0] &&\n"
    "             t > 1.5 * o2c_calls.best[0];\n"
    "  if (p == O2C_CALLS_PROBE - 1 || lost) {\n"
    "    int solo = o2c_calls.choice, clear = lost;\n"
    "    double t0 = o2c_calls.best[0], t1 = o2c_calls.best[1];\n"
    "    if (lost) solo = 0;\n"
    "    else if (t0 && t1) solo = t1 < t0, clear = t0 > 1.25 * t1 || t1 > 1.25 * t0;\n"
    "    /* the hold doubles while the choice holds, quadruples when it was\n"
    "     * clear (a quarter faster or more): fewer probes where one mode\n"
    "     * wins by far (ResNet-18: 6 calls alone of 19 ms against 11 threaded) */\n"
    "    int64_t h = solo == o2c_calls.choice && o2c_calls.hold ? o2c_calls.hold * (clear ? 4 : 2)\n"
    "                                                         : O2C_CALLS_HOLD * (clear ? 4 : 1);\n"
    "    o2c_calls.hold = h < O2C_CALLS_HOLD_MAX ? h : O2C_CALLS_HOLD_MAX;\n"
    "    o2c_calls.choice = solo, o2c_calls.next = o2c_calls.n + o2c_calls.hold;\n"
    "    if (t0 > O2C_CALLS_LONG && (lost || t1 > O2C_CALLS_LONG)) o2c_calls.next = INT64_MAX;\n"
    "    o2c_calls.best[0] = o2c_calls.best[1] = 0;\n"
    "    atomic_store_explicit(&o2c_pool.solo, solo, memory_order_relaxed);\n"
    "  }\n"
    "  atomic_flag_clear_explicit(&o2c_calls.busy, memory_order_release);\n"
    "}\n"
    "#else\n"
    "static int o2c_pool_call_begin(void) {\n"
    "  return 0;\n"
    "}\n"
    "static void o2c_pool_call_end(int mine, int ok) {\n"
    "  (void)mine, (void)ok;\n"
    "}\n"
    "#endif\n"
    "\n";
