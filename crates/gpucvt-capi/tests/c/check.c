/* gpucvt_check_text over a source on standard input: prints the status, the error count and
 * each diagnostic as "line<TAB>column<TAB>severity<TAB>status<TAB>rule<TAB>message". Run by
 * the test `check::`; argv[1] is the dialect (ptx, visa, tile), argv[2] a PTX target or
 * "-", argv[3] a PTX or Tile IR version or "-". */
#include "gpucvt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    uint32_t dialect = strcmp(argv[1], "ptx") == 0    ? GPUCVT_DIALECT_PTX
                       : strcmp(argv[1], "visa") == 0 ? GPUCVT_DIALECT_VISA
                                                      : GPUCVT_DIALECT_TILE;
    size_t cap = 1 << 16, len = 0, got;
    char *text = malloc(cap);
    while ((got = fread(text + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap) text = realloc(text, cap *= 2);
    }
    gpucvt_options o;
    memset(&o, 0, sizeof o);
    o.size = sizeof o;
    const char *version = strcmp(argv[3], "-") == 0 ? NULL : argv[3];
    o.target = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
    if (dialect == GPUCVT_DIALECT_TILE) o.tile_version = version; else o.ptx_version = version;
    gpucvt_diag_list *list = NULL;
    gpucvt_diag *why = NULL;
    gpucvt_status s = gpucvt_check_text(text, len, dialect, &o, &list, &why);
    free(text);
    printf("status %d errors %zu\n", (int)s, gpucvt_diag_list_errors(list));
    if (list == NULL) {
        printf("not checked: %s\n", gpucvt_diag_message(why));
        gpucvt_diag_free(why);
        return 0;
    }
    for (size_t i = 0; i < gpucvt_diag_list_len(list); i++) {
        const gpucvt_diag *d = gpucvt_diag_list_get(list, i);
        printf("%u\t%u\t%u\t%d\t%s\t%s\n", gpucvt_diag_line(d), gpucvt_diag_column(d), gpucvt_diag_severity(d),
               (int)gpucvt_diag_status(d), gpucvt_diag_rule(d), gpucvt_diag_message(d));
    }
    if (gpucvt_diag_list_get(list, gpucvt_diag_list_len(list)) != NULL) return 4;
    gpucvt_diag_list_free(list);
    return 0;
}
