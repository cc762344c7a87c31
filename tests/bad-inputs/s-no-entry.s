	.text
	.globl other
other:
	ret
