# `cmake --install` exports the hostir CMake package: C++ users write
#   find_package(hostir REQUIRED)
#   target_link_libraries(app PRIVATE hostir::runtime)
# (hostir::core is the compiler half without ATen). Installs the static
# libraries, the headers under <prefix>/include/hostir and
# <prefix>/lib/cmake/hostir/. tests/package builds examples/ against it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HOSTIR_VERSION "0.1.0")

# Inside the build tree the headers are read from src/; once installed, from
# <prefix>/include.
set_property(TARGET hostir_core PROPERTY INTERFACE_INCLUDE_DIRECTORIES
             $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/src>
             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
set_target_properties(hostir_core PROPERTIES EXPORT_NAME core)
set_target_properties(hostir_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(hostir_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(hostir_comm_mpi PROPERTIES EXPORT_NAME comm_mpi)

install(TARGETS hostir_core hostir_kernels hostir_comm_mpi hostir_runtime EXPORT hostirTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/src/hostir DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT hostirTargets NAMESPACE hostir::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hostir)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/hostirConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/hostirConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hostir)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/hostirConfigVersion.cmake
                                 VERSION ${HOSTIR_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/hostirConfig.cmake ${CMAKE_BINARY_DIR}/hostirConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hostir)
