	.text
	.globl gdcc_entry
gdcc_entry:
	ld a0, [a0
	ret
