// Case 4 of the adversarial candidates: saxpy, right, that also keeps a
// value one element past the end of its output (memory the recorded launch
// never wrote: in the application, the next allocation's bytes).
void saxpy(int n, float a, float *x, float *y) {
  float last = 0;
  for (int i = 0; i < n; ++i)
    last = y[i] = a * x[i] + y[i];
  y[n] = last;
}
