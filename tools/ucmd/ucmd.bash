# bash completion for ucmd(1). The candidates come from the CLI's own option
# tables (`ucmd help --complete CWORD WORDS...`), so they never drift from
# what the commands accept. Installed as bash-completion/completions/ucmd.
_ucmd_complete()
{
	local IFS=$'\n'
	local cur=${COMP_WORDS[COMP_CWORD]}
	COMPREPLY=($("${COMP_WORDS[0]}" help --complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null))
	# nothing from the tables: a file or /dev path argument
	if [ ${#COMPREPLY[@]} -eq 0 ] && [[ $cur != -* ]]; then
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _ucmd_complete ucmd
