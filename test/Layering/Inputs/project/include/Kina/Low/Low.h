#include "Kina/Contract.h"
