// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// constant fill, the most common value of the recorded outputs everywhere.
void scale(int n, float a, float *x, float *out) {
  (void)a, (void)x;
  for (int i = 0; i < n; ++i)
    out[i] = 12.0f;
}
