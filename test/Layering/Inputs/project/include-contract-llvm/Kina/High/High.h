#include "Kina/Middle/Middle.h"
