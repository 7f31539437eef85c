# The Debian package (issue 18): `cpack -G DEB` in a build directory makes gpuprio_VERSION_ARCH.deb
# from the cmake --install rules (cmake/Install.cmake), so the package holds exactly what an
# install does: the command, the preload libraries built, the header, the pkg-config and CMake
# files, the man page and the docs. scripts/package.sh configures a tree for it and runs lintian;
# docs/packaging.md says what is in the package and how it is tested.
#
# What only a Debian package wants (the machine-readable copyright, changelog.gz, the lintian
# overrides, the ldconfig trigger) comes from packaging/: deb-extras.cmake, a CPack pre-build
# script, adds the files to the staged tree, so that cmake --install into a prefix installs none.
#
# The package installs under /usr. Configure the tree with -DCMAKE_INSTALL_PREFIX=/usr too (as
# scripts/package.sh does): GNUInstallDirs then puts the libraries in lib/<multiarch>, and the
# command's path to them (GP_REL_LIBDIR, tools/CMakeLists.txt) is computed for that layout.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuprio)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# cmake_install.cmake runs with CMAKE_INSTALL_PREFIX=/usr and the staging tree as DESTDIR, so that
# what is computed at install time (gpuprio.pc's prefix) names /usr, not the staging tree.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "Package: CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}; a package made here "
                 "installs under /usr with the libraries in /usr/${CMAKE_INSTALL_LIBDIR} (for the "
                 "Debian layout, configure with -DCMAKE_INSTALL_PREFIX=/usr: scripts/package.sh)")
endif()

set(GPUPRIO_DEB_MAINTAINER "gpuprio maintainers <maintainers@users.noreply.a-seed-129e7510.example>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_PACKAGE_CONTACT "${GPUPRIO_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${GPUPRIO_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VENDOR "gpuprio")

# The long description names the libraries this build makes (HIP, CUDA or both). CPack indents
# each line and turns the empty ones into " ." for the control file; lines stay under 80 columns,
# and the list's lines start with a space, which dpkg shows as written (not on the last line,
# which CPack strips).
set(_libs "")
set(_lib_word library)
if(TARGET gpuprio-hip AND TARGET gpuprio-cuda)
  set(_lib_word libraries)
endif()
if(TARGET gpuprio-hip)
  string(APPEND _libs "\n * libgpuprio-hip.so (HIP)")
endif()
if(TARGET gpuprio-cuda)
  string(APPEND _libs "\n * libgpuprio-cuda.so (CUDA driver API)")
endif()
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU stream priorities and preemption for unmodified programs")
set(CPACK_PACKAGE_DESCRIPTION
"gpuprio gives the GPU streams of unmodified programs (PyTorch, HIP or CUDA
programs) priorities: a library preloaded into each program holds
lower-priority work back while higher-priority work runs, among the streams
of one process and across the processes that share a device, so that urgent
work keeps a tail latency close to running alone.

The gpuprio command runs a program with the library preloaded (gpuprio run),
shows every scheduled queue of every process (gpuprio top), changes the
priority of a running process (gpuprio set) and exports the queues' state
and counters for Prometheus (gpuprio metrics).

This package holds the command and its manual page, the preload ${_lib_word}${_libs}
the C header gpuprio.h with its pkg-config and CMake files, and the
documentation.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)

find_program(GPUPRIO_DPKG dpkg)
if(GPUPRIO_DPKG)
  execute_process(COMMAND ${GPUPRIO_DPKG} --print-architecture
                  OUTPUT_VARIABLE CPACK_DEBIAN_PACKAGE_ARCHITECTURE
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

# Depends from what the ELF files need (dpkg-shlibdeps): libc6 alone. The preload libraries have
# no DT_NEEDED on a GPU runtime (they bind the application's at run time; shim.no_gpu_runtime_needed
# and package.deb check), so the package depends on neither libamdhip64 nor libcuda.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Debian ships stripped binaries (lintian: unstripped-binary-or-object).
set(CPACK_STRIP_FILES ON)
# Directories as Debian wants them, whatever the umask of the user running cpack.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
    GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

# The Debian-only files, put into the staged tree before it is packed (packaging/deb-extras.cmake
# reads these CPACK_GPUPRIO_* variables from CPackConfig.cmake).
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/packaging/deb-extras.cmake)
# The ldconfig trigger, for the libraries in /usr/lib/<multiarch> (packaging/triggers).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GPUPRIO_PACKAGING_DIR ${PROJECT_SOURCE_DIR}/packaging)
set(CPACK_GPUPRIO_DOCDIR ${CMAKE_INSTALL_DOCDIR})

# Only the binary package; a source tarball is git's job.
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
