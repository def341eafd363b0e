# bash completion for dtypelint(1). Rule ids and names come from the installed binary
# (dtypelint --list-rules); tests/install/completions.py checks options and formats
# against --help.
_dtypelint_rules()
{
	dtypelint --list-rules 2>/dev/null | awk '{ print $1; print $2 }'
}

_dtypelint()
{
	local cur prev words cword
	if declare -F _init_completion >/dev/null 2>&1; then
		_init_completion || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}
		prev=${COMP_WORDS[COMP_CWORD - 1]}
	fi
	case $prev in
	--deepspeed | --accelerate | --peft | --trainer-args | --framework-config | --export | \
		-o | --output | \
		--plan | --config | --baseline | --write-baseline | --stdin-filename)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--scan-kernels | --kernels)
		COMPREPLY=($(compgen -d -- "$cur"))
		return
		;;
	-f | --format)
		COMPREPLY=($(compgen -W "text concise json json-lines sarif github gitlab markdown html" -- "$cur"))
		return
		;;
	--color)
		COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
		return
		;;
	--strategy)
		COMPREPLY=($(compgen -W "zero3 fsdp1 fsdp2 ddp single" -- "$cur"))
		return
		;;
	--precision)
		COMPREPLY=($(compgen -W "bf16 fp16 fp32" -- "$cur"))
		return
		;;
	--fail-on)
		COMPREPLY=($(compgen -W "error warning info" -- "$cur"))
		return
		;;
	--with)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "torch= transformers= peft= deepspeed= accelerate= trl= bitsandbytes=" -- "$cur"))
		return
		;;
	--select | --extend-select | --ignore | --explain)
		COMPREPLY=($(compgen -W "ALL $(_dtypelint_rules)" -- "$cur"))
		return
		;;
	--pick | --trace | --setup | --device-memory | --max-file-size | --max-depth | --max-alias-nodes | --max-tensors | \
		--max-name-length | --max-rank | --max-header-size)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--deepspeed --accelerate --peft --trainer-args --framework-config
			--framework-override --export
			--fix-plan --diff --write --pick --wrap-plan --memory --device-memory --scan-kernels --kernels --plan --strategy
			--precision --with -f --format -o --output --color --statistics --show-plan
			--trace -q --quiet -v --verbose --select --extend-select --ignore --fail-on --exit-zero
			--list-rules --explain --config --no-config --setup --stdin-filename
			--baseline --write-baseline
			--max-file-size --max-depth --max-alias-nodes --max-tensors --max-name-length
			--max-rank --max-header-size --version -h --help" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _dtypelint -o filenames dtypelint
