const char *moat_placeholder_symbol = "moat";
