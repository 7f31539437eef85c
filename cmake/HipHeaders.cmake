# HipHeaders.cmake: where the HIP headers are, and which HIP they are.
#
# gpuprio needs only HIP's headers to build: the shim never links libamdhip64 (it finds the
# runtime the program loaded), so neither hipcc nor the HIP runtime is needed. Looked for, first
# found wins:
#   1. GPUPRIO_HIP_INCLUDE_DIR, a directory holding hip/hip_runtime_api.h, if given;
#   2. HIP_PATH, then ROCM_PATH (a CMake variable, else the environment variable): PREFIX/include,
#      as AMD's packages install HIP (/opt/rocm-X.Y.Z);
#   3. hip_DIR (where hip-config.cmake is, PREFIX/lib/cmake/hip or PREFIX/lib/ARCH/cmake/hip):
#      its PREFIX/include. hip-config.cmake itself is not run: it insists on hipcc and the HIP
#      compilers, which a C library built with gcc or clang does not need;
#   4. /opt/rocm/include, AMD's default;
#   5. the system's include directories (Debian's libamdhip64-dev: /usr/include/hip).
# A HIP_PATH or ROCM_PATH without the headers is a warning, and the search goes on.
#
# Sets GPUPRIO_WITH_HIP, GPUPRIO_HIP_INCLUDE_DIR, GPUPRIO_HIP_VERSION (MAJOR.MINOR.PATCH from
# hip/hip_version.h) and the interface target gpuprio_hip_headers, which adds the directory as a
# system one (the headers are not ours to warn about: 6.4's declare `hipProfilerStart()`).

set(HIP_PATH "" CACHE PATH "HIP installation prefix (PREFIX/include/hip); else $ENV{HIP_PATH}")
set(ROCM_PATH "" CACHE PATH "ROCm installation prefix (PREFIX/include/hip); else $ENV{ROCM_PATH}")

set(_gp_hip_hints "")
foreach(_v HIP_PATH ROCM_PATH)
  set(_p "${${_v}}")
  if(NOT _p AND DEFINED ENV{${_v}})
    set(_p "$ENV{${_v}}")
  endif()
  if(_p)
    if(EXISTS "${_p}/include/hip/hip_runtime_api.h")
      list(APPEND _gp_hip_hints "${_p}/include")
    else()
      message(WARNING "${_v}=${_p} has no include/hip/hip_runtime_api.h; looking elsewhere")
    endif()
  endif()
endforeach()
if(hip_DIR)
  foreach(_up ../../.. ../../../..)
    get_filename_component(_p "${hip_DIR}/${_up}/include" ABSOLUTE)
    if(EXISTS "${_p}/hip/hip_runtime_api.h")
      list(APPEND _gp_hip_hints "${_p}")
      break()
    endif()
  endforeach()
endif()

# A changed HIP_PATH, ROCM_PATH or hip_DIR on a later configure looks again (find_path's result
# is cached); a GPUPRIO_HIP_INCLUDE_DIR given on the first configure is kept.
if(DEFINED _GPUPRIO_HIP_HINTS AND NOT "${_gp_hip_hints}" STREQUAL "${_GPUPRIO_HIP_HINTS}")
  unset(GPUPRIO_HIP_INCLUDE_DIR CACHE)
endif()
set(_GPUPRIO_HIP_HINTS "${_gp_hip_hints}" CACHE INTERNAL "where HIP was looked for")

# HINTS come before the system's directories, PATHS after them: /opt/rocm is a hint.
find_path(GPUPRIO_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ${_gp_hip_hints} /opt/rocm/include
          DOC "Directory holding hip/hip_runtime_api.h (see cmake/HipHeaders.cmake)")

set(GPUPRIO_WITH_HIP OFF)
set(GPUPRIO_HIP_VERSION "")
if(GPUPRIO_HIP_INCLUDE_DIR)
  set(GPUPRIO_WITH_HIP ON)
  set(_h "${GPUPRIO_HIP_INCLUDE_DIR}/hip/hip_version.h")
  if(EXISTS "${_h}")
    foreach(_part MAJOR MINOR PATCH)
      file(STRINGS "${_h}" _line REGEX "^#define HIP_VERSION_${_part} +[0-9]+")
      string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _n "${_line}")
      list(APPEND GPUPRIO_HIP_VERSION "${_n}")
    endforeach()
    list(JOIN GPUPRIO_HIP_VERSION "." GPUPRIO_HIP_VERSION)
  else()
    set(GPUPRIO_HIP_VERSION "unknown (no hip/hip_version.h)")
  endif()
  message(STATUS "HIP headers: ${GPUPRIO_HIP_INCLUDE_DIR}/hip, HIP ${GPUPRIO_HIP_VERSION} "
                 "(choose with -DHIP_PATH=PREFIX, -DROCM_PATH=PREFIX or "
                 "-DGPUPRIO_HIP_INCLUDE_DIR=DIR)")
  add_library(gpuprio_hip_headers INTERFACE)
  target_include_directories(gpuprio_hip_headers SYSTEM INTERFACE ${GPUPRIO_HIP_INCLUDE_DIR})
endif()
