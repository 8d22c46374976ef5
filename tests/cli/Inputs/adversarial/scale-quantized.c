// A catalogue pattern among the adversarial candidates (replay-catalogue.test):
// lower precision, the input quantized to whole numbers before the product
// (as an 8-bit integer kernel would): 1.5 becomes 1.
void scale(int n, float a, float *x, float *out) {
  for (int i = 0; i < n; ++i)
    out[i] = a * (float)(int)x[i];
}
