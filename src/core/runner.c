/* placeholder: being written */
#include "config.h"
#include "runner.h"
