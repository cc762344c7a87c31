B	initial_hJ(Y5,?d
?+d˜>Ì®¾Ý«¶¾ÕBt¿´ó¯>aXi¿šá>¯Ul?