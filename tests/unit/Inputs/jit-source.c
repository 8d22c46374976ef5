/* A --source file for the host JIT tests: a kernel with a static helper, a
 * constant table and a mutable global, as an application would have. */
static const int Weights[4] = {1, 2, 3, 4};
int calls;

static int weight(int i) { return Weights[i & 3]; }

long weighted_dot(const int *a, const int *b, int n) {
  long s = 0;
  ++calls;
  for (int i = 0; i < n; ++i)
    s += (long)a[i] * b[i] * weight(i);
  return s;
}
