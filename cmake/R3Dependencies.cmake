# Finds every dependency from the distribution's packages (Debian 12, Ubuntu 24.04).
# Required: LLVM/Clang 19, HDF5, SQLite3, CURL, tomlplusplus, nlohmann_json, Catch2
# (tests). Optional, switched by R3_WITH_CUDA / R3_WITH_MPI: the CUDA toolkit and MPI.
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
message(STATUS "r3: HDF5 ${HDF5_VERSION}")

find_package(SQLite3)
if(NOT SQLite3_FOUND)
  r3_missing("SQLite3" "libsqlite3-dev")
endif()
find_package(CURL)
if(NOT CURL_FOUND)
  r3_missing("libcurl" "libcurl4-openssl-dev")
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

if(R3_WITH_CUDA)
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
  if(CUDAToolkit_FOUND AND TARGET CUDA::cupti AND TARGET CUDA::nvrtc
     AND TARGET CUDA::nvJitLink)
    message(STATUS "r3: CUDA ${CUDAToolkit_VERSION} at ${CUDAToolkit_TARGET_DIR}: "
                   "CUDA backend enabled")
    set(R3_HAVE_CUDA ON)
  else()
    message(WARNING "r3: the CUDA toolkit (12 or newer, with CUPTI, NVRTC and "
                    "nvJitLink) was not found: building without the CUDA backend. "
                    "Install NVIDIA's CUDA toolkit (it is not a distribution package "
                    "of the right version) or pass -DR3_WITH_CUDA=OFF to silence this.")
    set(R3_HAVE_CUDA OFF)
  endif()
else()
  message(STATUS "r3: CUDA backend disabled (R3_WITH_CUDA=OFF)")
  set(R3_HAVE_CUDA OFF)
endif()

if(R3_WITH_MPI)
  find_package(MPI COMPONENTS C)
  if(MPI_FOUND)
    message(STATUS "r3: MPI ${MPI_C_VERSION}: multi-node campaigns enabled")
    set(R3_HAVE_MPI ON)
  else()
    message(WARNING "r3: MPI not found: building without multi-node campaigns "
                    "(package libopenmpi-dev, or -DR3_WITH_MPI=OFF to silence this)")
    set(R3_HAVE_MPI OFF)
  endif()
else()
  set(R3_HAVE_MPI OFF)
endif()

if(R3_BUILD_TESTS)
  find_package(Catch2 CONFIG)
  if(NOT Catch2_FOUND)
    r3_missing("Catch2" "catch2")
  endif()
  find_package(Python3 COMPONENTS Interpreter)
  find_program(R3_LIT NAMES lit.py PATHS /usr/lib/llvm-19/build/utils/lit NO_DEFAULT_PATH)
  find_program(R3_FILECHECK NAMES FileCheck PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  find_program(R3_NOT NAMES not PATHS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
  if(NOT R3_LIT OR NOT R3_FILECHECK OR NOT R3_NOT OR NOT Python3_FOUND)
    r3_missing("lit, FileCheck and not (LLVM 19 test tools) or python3" "llvm-19-tools")
  endif()
endif()
