// (being written)
#include "Catch.h"
