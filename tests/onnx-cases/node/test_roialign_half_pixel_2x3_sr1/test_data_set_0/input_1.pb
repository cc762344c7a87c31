BroisJP7‹¿{Î{Àž†“ALÑAg˜¥Àx«+A¿3ŸA½¿[AÏU=Aô„@i(B·˜ÈAá7
?˜žÀv¥@Ï/C¿	>AF2AÎwïAÕX†A