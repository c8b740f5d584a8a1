/* placeholder: being written */
#include "config.h"
#include "paths.h"
