// A variant of saxpy that dereferences a null pointer.
void saxpy(int n, float a, float *x, float *y) {
  volatile float *p = 0;
  *p = a;
  for (int i = 0; i < n; ++i)
    y[i] = a * x[i] + y[i];
}
