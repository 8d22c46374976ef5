/* Does not compile: the diagnostic must reach the user. */
int broken(int x) { return x + undeclared_thing; }
