// Included by cuda-scale.cu: the compile-cache tests edit a copy of it.
#pragma once
#define SCALE_REPEAT 4
