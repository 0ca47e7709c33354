# Optional CUDA: the CUDA calibration backend (models/calibration/cuda/) is built when nvcc is found,
# and nothing else depends on it. Include this file from the top-level CMakeLists.txt before
# add_subdirectory(models); it sets
#   DNNSIM_HAVE_CUDA  ON when the CUDA language is enabled and the toolkit (cudart, cuBLAS) was found.
#
# Recipe verified in docs/research/simgrid-recipes.md §7 (nvcc 13.0 at /usr/local/cuda, no GPU):
# - CMake 3.25 looks for nvcc on PATH only, so /usr/local/cuda/bin/nvcc is tried explicitly unless
#   the user chose a compiler (-DCMAKE_CUDA_COMPILER=… or CUDACXX=…; CUDACXX=/nonexistent disables).
# - check_language(CUDA) never fails: without a working nvcc it leaves CMAKE_CUDA_COMPILER NOTFOUND
#   and the build goes on without CUDA.
# - CMAKE_CUDA_ARCHITECTURES must be set BEFORE enable_language(CUDA), or CMake picks its own default.
#   80 (Ampere) and 90 (Hopper) embed SASS for A100/H100/H200 and compute_80 PTX that the driver
#   JIT-compiles for newer GPUs (sm_86 A10/RTX 3090, sm_89 L4/RTX 4090). nvcc 13 supports sm_75 and
#   up; add 75 for a T4 (-DCMAKE_CUDA_ARCHITECTURES="75;80;90"). V100/P100 (sm_70/sm_60) need an
#   older toolkit.
option(DNNSIM_ENABLE_CUDA "Build the CUDA calibration backend if nvcc is found" ON)
set(DNNSIM_HAVE_CUDA OFF)

if(DNNSIM_ENABLE_CUDA)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    # nvcc drives the host compiler the C++ sources use (g++ 12 here), unless told otherwise.
    if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER AND NOT DEFINED ENV{CUDAHOSTCXX})
      set(CMAKE_CUDA_HOST_COMPILER ${CMAKE_CXX_COMPILER})
    endif()
    enable_language(CUDA)
    # The .cu files are C++17 (nvcc's host side); the C++20 project headers stay out of them.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    if(CCACHE_PROGRAM)
      set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
    endif()
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cudart AND TARGET CUDA::cublas)
      set(DNNSIM_HAVE_CUDA ON)
      message(STATUS "dnnsim: CUDA calibration backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                     "architectures ${CMAKE_CUDA_ARCHITECTURES})")
    else()
      message(STATUS "dnnsim: CUDA calibration backend OFF (nvcc found, but not cudart and cuBLAS)")
    endif()
  else()
    message(STATUS "dnnsim: CUDA calibration backend OFF (no nvcc; set CMAKE_CUDA_COMPILER or CUDACXX)")
  endif()
else()
  message(STATUS "dnnsim: CUDA calibration backend OFF (DNNSIM_ENABLE_CUDA=OFF)")
endif()
