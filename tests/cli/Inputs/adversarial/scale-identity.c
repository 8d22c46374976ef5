// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// the identity kernel, which copies its input to its output.
void scale(int n, float a, float *x, float *out) {
  (void)a;
  for (int i = 0; i < n; ++i)
    out[i] = x[i];
}
