# find_package(onnx2c-caten): the installed compiler as the imported target
# onnx2c-caten::onnx2c-caten, and
#
#   onnx2c_add_model(TARGET model.onnx [NAME prefix] [OPTIONS option...])
#
# which compiles the model at build time (again when the model or the
# compiler changes) into a static library TARGET: its include directory
# holds PREFIX.h; PREFIX defaults to TARGET. The weights file's path is the
# target property ONNX2C_WEIGHTS (with OPTIONS --embed-weights the weights
# are in the library instead). OPTIONS go to `onnx2c-caten compile` as they
# are (--threads N also links OpenMP).
#
# This file lives in PREFIX/share/onnx2c-caten/cmake/.
get_filename_component(_onnx2c_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET onnx2c-caten::onnx2c-caten)
  add_executable(onnx2c-caten::onnx2c-caten IMPORTED)
  set_target_properties(onnx2c-caten::onnx2c-caten PROPERTIES
    IMPORTED_LOCATION "${_onnx2c_prefix}/bin/onnx2c-caten")
endif()
unset(_onnx2c_prefix)

function(onnx2c_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 O2C "" "NAME" "OPTIONS")
  if(O2C_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "onnx2c_add_model: unexpected arguments ${O2C_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT O2C_NAME)
    set(O2C_NAME ${target})
  endif()
  get_filename_component(model ${model} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/onnx2c/${target})
  set(sources ${dir}/${O2C_NAME}.c)
  set(outputs ${sources} ${dir}/${O2C_NAME}.h ${dir}/${O2C_NAME}.weights)
  if("--embed-weights" IN_LIST O2C_OPTIONS)
    list(APPEND sources ${dir}/${O2C_NAME}_weights.c)
    list(APPEND outputs ${dir}/${O2C_NAME}_weights.c)
  endif()
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND onnx2c-caten::onnx2c-caten compile ${model} -o ${dir} --name ${O2C_NAME} ${O2C_OPTIONS}
    DEPENDS ${model} $<TARGET_FILE:onnx2c-caten::onnx2c-caten>
    COMMENT "onnx2c-caten: compiling ${model}"
    VERBATIM)
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC ${dir})
  set_target_properties(${target} PROPERTIES ONNX2C_WEIGHTS ${dir}/${O2C_NAME}.weights)
  if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
    # the flags the generated code is written for (README, "Using it")
    target_compile_options(${target} PRIVATE -fno-math-errno -fopenmp-simd)
    target_compile_definitions(${target} PRIVATE ONNX2C_OMP_SIMD)
  endif()
  if(NOT MSVC)
    target_link_libraries(${target} PUBLIC m)
  endif()
  if("--threads" IN_LIST O2C_OPTIONS)
    find_package(OpenMP REQUIRED COMPONENTS C)
    target_link_libraries(${target} PUBLIC OpenMP::OpenMP_C)
  endif()
endfunction()
