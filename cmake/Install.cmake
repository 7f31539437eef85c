# Install rules (cmake --install BUILD --prefix P), in the GNU layout:
#   LIBDIR/libgpuprio-hip.so and libgpuprio-cuda.so (each where it is built), INCLUDEDIR/gpuprio.h,
#   BINDIR/gpuprio, LIBDIR/pkgconfig/gpuprio.pc, LIBDIR/cmake/gpuprio/gpuprio{Config,ConfigVersion}.cmake
#   MANDIR/man1/gpuprio.1.gz (generated from docs/cli.md), DOCDIR/README.md, DOCDIR/docs/*.md
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

# pkg-config: written when installing, so that it names the prefix given to cmake --install, and
# names a preload variable for each library built (escaped twice: for this string, then for the
# install script's).
set(_pc_in ${PROJECT_SOURCE_DIR}/cmake/gpuprio.pc.in)
set(_pc_out ${PROJECT_BINARY_DIR}/gpuprio.pc)
set(_pc_preloads "")
foreach(_platform hip cuda)
  if(TARGET gpuprio-${_platform})
    string(APPEND _pc_preloads "preload_${_platform}=\\\${libdir}/libgpuprio-${_platform}.so\\n")
  endif()
endforeach()
install(CODE "
  set(GPUPRIO_PC_PRELOADS \"${_pc_preloads}\")
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

# The man page gpuprio(1), generated from docs/cli.md (the manual, written in man-page structure)
# by cmake/md2man.awk with the system's awk, so the page never drifts from the manual and the
# build needs no pandoc. gzip -n leaves out the name and time, so the same input gives the same
# bytes (reproducible builds); -9 because Debian wants it (lintian). gpuprio.1 stays next to it for
# the package.man test.
find_program(GPUPRIO_AWK NAMES awk mawk gawk REQUIRED)
find_program(GPUPRIO_GZIP gzip REQUIRED)
set(GPUPRIO_MAN_SOURCE ${PROJECT_SOURCE_DIR}/docs/cli.md)
set(GPUPRIO_MAN_PAGE ${PROJECT_BINARY_DIR}/gpuprio.1)
add_custom_command(
  OUTPUT ${GPUPRIO_MAN_PAGE} ${GPUPRIO_MAN_PAGE}.gz
  COMMAND sh -c "\"$1\" -v version=\"$2\" -v source=docs/cli.md -f \"$3\" \"$4\" >\"$5.tmp\" \
                 && mv \"$5.tmp\" \"$5\" && \"$6\" -9nc \"$5\" >\"$5.gz\""
          sh ${GPUPRIO_AWK} ${PROJECT_VERSION} ${PROJECT_SOURCE_DIR}/cmake/md2man.awk
          ${GPUPRIO_MAN_SOURCE} ${GPUPRIO_MAN_PAGE} ${GPUPRIO_GZIP}
  DEPENDS ${GPUPRIO_MAN_SOURCE} ${PROJECT_SOURCE_DIR}/cmake/md2man.awk
  COMMENT "Generating the man page gpuprio.1 from docs/cli.md"
  VERBATIM)
add_custom_target(gpuprio-man ALL DEPENDS ${GPUPRIO_MAN_PAGE}.gz)
install(FILES ${GPUPRIO_MAN_PAGE}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The docs, in the layout of the source tree, so that the paths they give each other
# (docs/cli.md, docs/configuration.md) hold under DOCDIR too.
file(GLOB _gpuprio_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${_gpuprio_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
