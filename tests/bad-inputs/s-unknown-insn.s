	.text
	.globl gdcc_entry
gdcc_entry:
	frobnicate a0, a1
	ret
