// Does not compile: the compile-error test's source.
__global__ void broken(float *Out) { Out[threadIdx.x] = undeclared_value; }
