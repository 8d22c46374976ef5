# Finds every dependency from the distribution's packages (Debian 12, Ubuntu 24.04).
# Required: LLVM/Clang 19, HDF5, SQLite3, CURL, zlib, tomlplusplus, nlohmann_json,
# Catch2, lit and FileCheck (tests). Optional, switched by R3_WITH_CUDA /
# R3_WITH_MPI (AUTO, ON, OFF): the CUDA toolkit and MPI.
# Every missing piece is named with the package that provides it.

function(r3_missing what package)
  message(FATAL_ERROR "r3: ${what} not found; install it with scripts/install-deps "
                      "(Debian/Ubuntu package: ${package})")
endfunction()

# LLVM 19: `find_package(LLVM 19 ...)` rejects 19.1.x, so ask for 19.1 exactly.
find_package(LLVM 19.1 CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
if(NOT LLVM_FOUND)
  r3_missing("LLVM 19.1" "llvm-19-dev")
endif()
# Clang's config must be found beside LLVM 19's, or CMake picks an older broken one.
find_package(Clang CONFIG PATHS "${LLVM_INSTALL_PREFIX}/lib/cmake/clang"
             /usr/lib/llvm-19/lib/cmake/clang NO_DEFAULT_PATH)
if(NOT Clang_FOUND)
  r3_missing("Clang 19" "libclang-19-dev")
endif()
message(STATUS "r3: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_INSTALL_PREFIX}")
set(R3_LLVM_BINDIR "${LLVM_TOOLS_BINARY_DIR}" CACHE INTERNAL "")

find_package(HDF5 COMPONENTS C)
if(NOT HDF5_FOUND)
  r3_missing("HDF5 (C API)" "libhdf5-dev")
endif()
if(NOT TARGET hdf5::hdf5)
  add_library(hdf5::hdf5 INTERFACE IMPORTED)
  target_include_directories(hdf5::hdf5 INTERFACE ${HDF5_C_INCLUDE_DIRS})
  target_link_libraries(hdf5::hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  target_compile_definitions(hdf5::hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
endif()
# 1.10.5: H5Dget_num_chunks, with which the reader checks that every chunk
# of a byte dataset is stored.
if(HDF5_VERSION AND HDF5_VERSION VERSION_LESS 1.10.5)
  message(FATAL_ERROR "r3: HDF5 ${HDF5_VERSION} is older than 1.10.5, which r3 needs")
endif()
message(STATUS "r3: HDF5 ${HDF5_VERSION}")

find_package(SQLite3)
if(NOT SQLite3_FOUND)
  r3_missing("SQLite3" "libsqlite3-dev")
endif()
find_package(CURL)
if(NOT CURL_FOUND)
  r3_missing("libcurl" "libcurl4-openssl-dev")
endif()
find_package(ZLIB)
if(NOT ZLIB_FOUND)
  r3_missing("zlib" "zlib1g-dev")
endif()
find_package(nlohmann_json 3 CONFIG)
if(NOT nlohmann_json_FOUND)
  r3_missing("nlohmann_json" "nlohmann-json3-dev")
endif()
find_package(tomlplusplus 3 CONFIG QUIET)
if(NOT tomlplusplus_FOUND)
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(tomlplusplus IMPORTED_TARGET tomlplusplus)
  endif()
  if(NOT tomlplusplus_FOUND)
    r3_missing("tomlplusplus" "libtomlplusplus-dev")
  endif()
  add_library(tomlplusplus::tomlplusplus ALIAS PkgConfig::tomlplusplus)
endif()

# R3_WITH_CUDA and R3_WITH_MPI are AUTO, ON or OFF. AUTO (the default) builds
# the part when its dependency is found and says so either way; ON requires it,
# so that a package manager's +cuda or +mpi never installs an r3 without it.
function(r3_feature_mode var out)
  string(TOUPPER "${${var}}" value)
  if(value STREQUAL "AUTO")
    set(${out} AUTO PARENT_SCOPE)
  elseif(value MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(${out} ON PARENT_SCOPE)
  elseif(value MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(${out} OFF PARENT_SCOPE)
  else()
    message(FATAL_ERROR "r3: error: ${var}: expected AUTO, ON or OFF, "
                        "got '${${var}}'")
  endif()
endfunction()

# A feature that was not found: fatal when it was asked for (ON), a warning
# when it was only wanted if present (AUTO).
function(r3_feature_missing var mode what hint)
  if(mode STREQUAL "ON")
    message(FATAL_ERROR "r3: error: ${var}=ON: ${what}; ${hint}, or configure "
                        "with -D${var}=AUTO to build without it when it is "
                        "absent")
  endif()
  message(WARNING "r3: ${what}: building without it (${var}=AUTO); ${hint}, "
                  "or pass -D${var}=OFF to silence this")
endfunction()

r3_feature_mode(R3_WITH_CUDA r3_cuda_mode)
set(R3_HAVE_CUDA OFF)
if(r3_cuda_mode STREQUAL "OFF")
  message(STATUS "r3: CUDA backend disabled (R3_WITH_CUDA=OFF)")
else()
  find_package(CUDAToolkit 12)
  # CMake 3.25 predates the CUDA::nvJitLink target: make it from the library.
  if(CUDAToolkit_FOUND AND NOT TARGET CUDA::nvJitLink)
    find_library(R3_NVJITLINK nvJitLink HINTS ${CUDAToolkit_LIBRARY_DIR}
                 ${CUDAToolkit_TARGET_DIR}/lib64)
    if(R3_NVJITLINK)
      add_library(CUDA::nvJitLink SHARED IMPORTED)
      set_target_properties(CUDA::nvJitLink PROPERTIES IMPORTED_LOCATION ${R3_NVJITLINK}
        INTERFACE_INCLUDE_DIRECTORIES ${CUDAToolkit_INCLUDE_DIRS})
    endif()
  endif()
  # FindCUDAToolkit makes CUDA::nvrtc depend on the driver (libcuda), which
  # NVRTC does not need: r3 must start where no driver is installed, and only
  # the replay server loads it, at run time.
  if(TARGET CUDA::nvrtc)
    set_property(TARGET CUDA::nvrtc PROPERTY INTERFACE_LINK_LIBRARIES "")
  endif()
  set(r3_cuda_lacks)
  foreach(part cupti nvrtc nvJitLink)
    if(NOT TARGET CUDA::${part})
      list(APPEND r3_cuda_lacks ${part})
    endif()
  endforeach()
  if(NOT CUDAToolkit_FOUND)
    string(CONCAT what "the CUDA toolkit 12 or newer was not found (looked at "
                  "CUDAToolkit_ROOT, CUDA_PATH, nvcc on PATH, /usr/local/cuda)")
    string(CONCAT hint "install NVIDIA's CUDA toolkit (not a distribution "
                  "package of the right version) or point "
                  "-DCUDAToolkit_ROOT=DIR at it")
    r3_feature_missing(R3_WITH_CUDA ${r3_cuda_mode} "${what}" "${hint}")
  elseif(r3_cuda_lacks)
    string(REPLACE ";" ", " r3_cuda_lacks "${r3_cuda_lacks}")
    string(CONCAT what "the CUDA toolkit ${CUDAToolkit_VERSION} at "
                  "${CUDAToolkit_TARGET_DIR} lacks ${r3_cuda_lacks} (expected "
                  "CUPTI, NVRTC and nvJitLink)")
    r3_feature_missing(R3_WITH_CUDA ${r3_cuda_mode} "${what}"
                       "install the toolkit's CUPTI, NVRTC and nvJitLink")
  else()
    message(STATUS "r3: CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_TARGET_DIR}: "
                   "CUDA backend enabled")
    set(R3_HAVE_CUDA ON)
  endif()
endif()

# The architecture `r3 compile` targets when --arch is not given, and the
# CUDA recipes build for when ARCH is not set (`r3 --version` prints it):
# 90 or sm_90. Empty: --arch is required.
set(R3_DEFAULT_CUDA_ARCH "" CACHE STRING
    "Default GPU architecture of r3 compile and the CUDA recipes (90 or sm_90)")
set(R3_DEFAULT_CUDA_ARCH_NAME "")
if(NOT R3_DEFAULT_CUDA_ARCH STREQUAL "")
  if(NOT R3_DEFAULT_CUDA_ARCH MATCHES "^(sm_)?([1-9][0-9][0-9]?)$")
    message(FATAL_ERROR "r3: error: R3_DEFAULT_CUDA_ARCH: expected a compute "
                        "capability such as 90 or sm_90, got "
                        "'${R3_DEFAULT_CUDA_ARCH}'")
  endif()
  set(R3_DEFAULT_CUDA_ARCH_NAME "sm_${CMAKE_MATCH_2}")
  if(R3_HAVE_CUDA)
    message(STATUS "r3: default CUDA architecture ${R3_DEFAULT_CUDA_ARCH_NAME}")
  endif()
endif()

r3_feature_mode(R3_WITH_MPI r3_mpi_mode)
set(R3_HAVE_MPI OFF)
if(r3_mpi_mode STREQUAL "OFF")
  message(STATUS "r3: MPI campaigns disabled (R3_WITH_MPI=OFF)")
else()
  find_package(MPI COMPONENTS C)
  if(MPI_FOUND)
    message(STATUS "r3: MPI ${MPI_C_VERSION}: multi-node campaigns enabled")
    set(R3_HAVE_MPI ON)
  else()
    string(CONCAT hint "install an MPI (Debian/Ubuntu package: "
                  "libopenmpi-dev) or point -DMPI_C_COMPILER=PATH at its mpicc")
    r3_feature_missing(R3_WITH_MPI ${r3_mpi_mode}
                       "MPI (the C API) was not found" "${hint}")
  endif()
endif()

if(R3_BUILD_TESTS)
  find_package(Catch2 CONFIG)
  if(NOT Catch2_FOUND)
    r3_missing("Catch2" "catch2")
  endif()
  find_package(Python3 COMPONENTS Interpreter)
  # lit: Debian's llvm-19-tools ships it as a script beside LLVM; elsewhere
  # (pip, Spack's py-lit) it is the `lit` command on PATH.
  find_program(R3_LIT NAMES lit.py lit llvm-lit
               PATHS /usr/lib/llvm-19/build/utils/lit ${LLVM_TOOLS_BINARY_DIR})
  find_program(R3_FILECHECK NAMES FileCheck PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_program(R3_NOT NAMES not PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  if(NOT R3_LIT OR NOT R3_FILECHECK OR NOT R3_NOT OR NOT Python3_FOUND)
    r3_missing("lit, FileCheck and not (LLVM 19 test tools) or python3" "llvm-19-tools")
  endif()
endif()
