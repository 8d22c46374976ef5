// Empty on purpose: CUDA 13 removed this header, which clang 19's CUDA wrapper
// headers still include. r3 puts this directory on the include path when it
// compiles device code with clang.
#pragma once
