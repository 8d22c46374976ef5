// A variant of saxpy that never returns.
void saxpy(int n, float a, float *x, float *y) {
  volatile int spin = 1;
  while (spin)
    ;
  for (int i = 0; i < n; ++i)
    y[i] = a * x[i] + y[i];
}
