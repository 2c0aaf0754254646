# aotc_add_model: compiles a model with aotc at build time into a target an app links.
#
#   aotc_add_model(<target> MODEL <file.fb|file.air> [NAME <name>] [TARGET <halide-target>]
#                  [OPTIONS <extra aotc arguments>...])
#   target_link_libraries(app PRIVATE <target>)
#
# The app then includes "<name>.h" (NAME defaults to <target>) and links lib<name>.a,
# pthread, dl and m (Halide may call libm: floorf on ARMv7). The outputs go to
# ${CMAKE_CURRENT_BINARY_DIR}/aotc/<target>/; the target's properties AOTC_OUTPUT_DIR
# and AOTC_REPORT name that directory and the report <name>.report.json. With OPTIONS
# --weights=external, the property AOTC_WEIGHTS names the weights file <name>.weights
# the app passes to each run (it is not linked).
# aotc reruns when the model file or aotc itself changes.
#
# Needs the executable target aotc::aotc: imported by find_package(aotc), or an alias
# of the in-tree aotc inside aotc's own build. TARGET defaults to AOTC_DEFAULT_TARGET
# when set (aotc's ARM trees set it), else the host. aotc always runs on the build
# machine, also when cross-compiling (no emulator).
include_guard(GLOBAL)

find_package(Threads REQUIRED)

function(aotc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;NAME;TARGET" "OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "aotc_add_model(${target}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_MODEL)
    message(FATAL_ERROR "aotc_add_model(${target}): MODEL <file> is required")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  cmake_path(ABSOLUTE_PATH ARG_MODEL BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR} NORMALIZE)

  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/aotc/${target})
  set(library ${out_dir}/lib${ARG_NAME}.a)
  set(header ${out_dir}/${ARG_NAME}.h)
  set(report ${out_dir}/${ARG_NAME}.report.json)
  set(weights_file)
  if("--weights=external" IN_LIST ARG_OPTIONS)
    set(weights_file ${out_dir}/${ARG_NAME}.weights)
  endif()
  if(NOT ARG_TARGET AND AOTC_DEFAULT_TARGET)
    set(ARG_TARGET ${AOTC_DEFAULT_TARGET})
  endif()
  set(target_option)
  if(ARG_TARGET)
    set(target_option --target ${ARG_TARGET})
  endif()

  add_custom_command(
    OUTPUT ${library} ${header} ${report} ${out_dir}/aotc/aotc.h ${weights_file}
    COMMAND $<TARGET_FILE:aotc::aotc> ${ARG_MODEL} --emit=lib -o ${out_dir} --name ${ARG_NAME} ${target_option} ${ARG_OPTIONS}
    DEPENDS ${ARG_MODEL} aotc::aotc
    COMMENT "aotc: compiling ${ARG_MODEL} into lib${ARG_NAME}.a"
    VERBATIM)
  add_custom_target(${target}_aotc DEPENDS ${library} ${header} ${report} ${weights_file})

  # An INTERFACE wrapper rather than an IMPORTED library: it can carry the build-order
  # dependency on the custom command, which an imported target cannot.
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_aotc)
  target_include_directories(${target} INTERFACE ${out_dir})
  target_link_libraries(${target} INTERFACE ${library} Threads::Threads ${CMAKE_DL_LIBS} m)
  set_target_properties(${target} PROPERTIES AOTC_OUTPUT_DIR ${out_dir} AOTC_REPORT ${report}
                                             AOTC_WEIGHTS "${weights_file}")
endfunction()
