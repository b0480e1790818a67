// Low includes a layer above it.
#include "Kina/Middle/Middle.h"
