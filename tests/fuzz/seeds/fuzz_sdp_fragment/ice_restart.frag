a=ice-ufrag:ZZyy
a=ice-pwd:abcdefghijklmnopqrstuvwx
