/* The implementation, included twice: the second inclusion must add nothing. */
#define LATTN_IMPLEMENTATION
#include "../lattn.h"
#include "../lattn.h"
int two_tu_check(void);
int two_tu_check(void) { return lattn_status_string(LATTN_OK)[0] != 'o'; }
