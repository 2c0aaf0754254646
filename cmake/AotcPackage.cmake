# The aotc CMake package: the aotc::aotc and aotc::runtime targets, aotc_add_model,
# and the install tree that find_package(aotc) reads:
#   bin/aotc, bin/aotc-export-torch (a link into share/aotc/tools)
#   include/aotc/aotc.h                  (installed aotc copies it beside each model header)
#   lib/cmake/aotc/                      aotcConfig.cmake, aotcConfigVersion.cmake,
#                                        aotcTargets*.cmake, AotcModel.cmake
#   share/aotc/schemas/aotc_model.fbs, share/aotc/tools/aotc-export-torch
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The SDK header as a target, for code that needs the status codes without a model.
add_library(aotc_runtime INTERFACE)
target_include_directories(aotc_runtime INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/sdk/include>
                                                  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(aotc_runtime PROPERTIES EXPORT_NAME runtime)

# The installed package's names, so that aotc_add_model works inside this build too.
add_executable(aotc::aotc ALIAS aotc)
add_library(aotc::runtime ALIAS aotc_runtime)
include(${CMAKE_CURRENT_LIST_DIR}/AotcModel.cmake)

set(package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/aotc)
install(TARGETS aotc aotc_runtime EXPORT aotcTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT aotcTargets NAMESPACE aotc:: DESTINATION ${package_dir})
install(FILES ${PROJECT_SOURCE_DIR}/sdk/include/aotc/aotc.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/aotc)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/aotcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/aotcConfig.cmake INSTALL_DESTINATION ${package_dir})
# Before 1.0 a minor version may change the generated API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/aotcConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/aotcConfig.cmake ${PROJECT_BINARY_DIR}/aotcConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/AotcModel.cmake
        DESTINATION ${package_dir})

# The exporter finds its schema at ../schemas relative to its own resolved path, so
# both live under share/aotc and bin/ holds a symbolic link to it.
install(FILES ${PROJECT_SOURCE_DIR}/schemas/aotc_model.fbs DESTINATION ${CMAKE_INSTALL_DATADIR}/aotc/schemas)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/aotc-export-torch DESTINATION ${CMAKE_INSTALL_DATADIR}/aotc/tools)
file(RELATIVE_PATH exporter_link_target /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_DATADIR}/aotc/tools/aotc-export-torch)
install(CODE "file(CREATE_LINK ${exporter_link_target}
  \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/aotc-export-torch\" SYMBOLIC)")
