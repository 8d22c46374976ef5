// A variant of scale that skips the outputs 100..149, which the recorded
// pre-state already held right: only poisoning catches it.
void scale(int n, float a, float *x, float *out) {
  for (int i = 0; i < n; ++i) {
    if (i >= 100 && i < 150)
      continue;
    out[i] = a * x[i];
  }
}
