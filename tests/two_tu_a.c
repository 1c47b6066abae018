/* Two translation units: the declarations here, the implementation in two_tu_b.c. */
#include "../lattn.h"
#include <stdio.h>
int two_tu_check(void);
int main(void) {
    float x[3] = { 1, 2, 3 };
    printf("two TUs: %s, dot %.1f\n", lattn_build_info(), (double)lattn_vec_dot(3, x, x));
    return two_tu_check() || lattn_vec_dot(3, x, x) != 14.0f;
}
