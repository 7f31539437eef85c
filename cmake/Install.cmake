# Install rules (cmake --install BUILD --prefix P), in the GNU layout:
#   LIBDIR/libgpuprio-hip.so and libgpuprio-cuda.so (each where it is built), INCLUDEDIR/gpuprio.h,
#   BINDIR/gpuprio, LIBDIR/pkgconfig/gpuprio.pc, LIBDIR/cmake/gpuprio/gpuprio{Config,ConfigVersion}.cmake
# The preload libraries are meant for LD_PRELOAD (gpuprio run), but programs may also link
# them for the API (gpuprio.h); the package files serve that. Everything is relocatable: the
# CMake package finds itself relative to its own file, the .pc file is written at install time
# with the prefix actually used, and the command finds the libraries relative to itself.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

if(TARGET gpuprio-hip)
  install(TARGETS gpuprio-hip LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
set(GPUPRIO_WITH_CUDA OFF)
if(TARGET gpuprio-cuda)
  install(TARGETS gpuprio-cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(GPUPRIO_WITH_CUDA ON)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/gpuprio.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS gpuprio RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# CMake: find_package(gpuprio) gives gpuprio::headers, gpuprio::hip (and gpuprio::cuda).
set(GPUPRIO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprio)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/gpuprioConfig.cmake.in
  ${PROJECT_BINARY_DIR}/gpuprioConfig.cmake
  INSTALL_DESTINATION ${GPUPRIO_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/gpuprioConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/gpuprioConfig.cmake
              ${PROJECT_BINARY_DIR}/gpuprioConfigVersion.cmake
        DESTINATION ${GPUPRIO_CMAKE_DIR})

# pkg-config: written when installing, so that it names the prefix given to cmake --install.
set(_pc_in ${PROJECT_SOURCE_DIR}/cmake/gpuprio.pc.in)
set(_pc_out ${PROJECT_BINARY_DIR}/gpuprio.pc)
install(CODE "
  set(GPUPRIO_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
  set(GPUPRIO_PC_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(GPUPRIO_PC_INCLUDEDIR \"${CMAKE_INSTALL_INCLUDEDIR}\")
  set(GPUPRIO_PC_VERSION \"${PROJECT_VERSION}\")
  foreach(_d LIBDIR INCLUDEDIR)
    if(NOT IS_ABSOLUTE \"\${GPUPRIO_PC_\${_d}}\")
      set(GPUPRIO_PC_\${_d} \"\\\${prefix}/\${GPUPRIO_PC_\${_d}}\")
    endif()
  endforeach()
  configure_file(\"${_pc_in}\" \"${_pc_out}\" @ONLY)
")
install(FILES ${_pc_out} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
