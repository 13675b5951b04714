#include "textflag.h"

// func prefetch(a, b unsafe.Pointer)
TEXT ·prefetch(SB), NOSPLIT|NOFRAME, $0-16
	MOVD	a+0(FP), R0
	MOVD	b+8(FP), R1
	PRFM	(R0), PLDL1KEEP
	PRFM	(R1), PLDL1KEEP
	RET
