# bash completion for dtypelint(1). Rule ids and names come from the installed binary
# (dtypelint --list-rules), set-up names from the configuration file (--config FILE, else the
# nearest .dtypelint.yaml). --opt=value, comma lists (--select DT101,DT1) and separate words
# complete alike; tests/install/completions.py checks options and formats against --help and
# drives the completion through compgen.
_dtypelint_rules()
{
	dtypelint --list-rules 2>/dev/null | awk '{ print $1; print $2 }'
}

# The set-up names of the config: "name:" entries under the top-level "setups:" key, block or
# flow style. The file is the one --config names, else the nearest .dtypelint.yaml upward.
_dtypelint_setups()
{
	local config="" dir=$PWD i
	for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
		case ${COMP_WORDS[i]} in
		--no-config) return ;;
		--config) config=${COMP_WORDS[i + 1]} ;;
		--config=*) config=${COMP_WORDS[i]#--config=} ;;
		esac
	done
	if [[ -z $config ]]; then
		while [[ -n $dir ]]; do
			[[ -f $dir/.dtypelint.yaml ]] && config=$dir/.dtypelint.yaml && break
			dir=${dir%/*}
		done
	fi
	[[ -f $config ]] || return
	awk '/^[^ \t#-]/ { on = ($0 ~ /^setups[ \t]*:/) }
		on { while (match($0, /name[ \t]*:[ \t]*["'"'"']?[^"'"'"',} \t]+/)) {
			v = substr($0, RSTART, RLENGTH); sub(/^name[ \t]*:[ \t]*["'"'"']?/, "", v)
			print v; $0 = substr($0, RSTART + RLENGTH) } }' "$config" 2>/dev/null
}

# COMPREPLY for a comma-separated list: the word after the last comma completed, the words
# before it kept; no space after it, so that a ',' can follow
_dtypelint_list()
{
	local head=""
	[[ $cur == *,* ]] && head=${cur%,*},
	compopt -o nospace 2>/dev/null
	COMPREPLY=($(compgen -P "$head" -W "$1" -- "${cur##*,}"))
}

_dtypelint()
{
	local cur prev eq=""
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	# --opt=value: three words where COMP_WORDBREAKS holds '=' (bash's default), else one
	# (then each reply keeps its "--opt=")
	if [[ $cur == --*=* ]]; then
		eq=${cur%%=*}= prev=${cur%%=*} cur=${cur#*=}
	elif [[ $cur == = && $prev == --* ]]; then
		cur=""
	elif [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	_dtypelint_reply
	[[ -n $eq ]] && COMPREPLY=("${COMPREPLY[@]/#/$eq}")
	return 0
}

# COMPREPLY for cur, the word being completed, after prev
_dtypelint_reply()
{
	case $prev in
	--deepspeed | --accelerate | --peft | --trainer-args | --framework-config | --launch | --versions-from | --export | \
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
	--assume)
		COMPREPLY=($(compgen -W "newest" -- "$cur"))
		return
		;;
	--versions-from)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	--with)
		compopt -o nospace 2>/dev/null
		COMPREPLY=($(compgen -W "torch= transformers= peft= deepspeed= accelerate= trl= bitsandbytes=" -- "$cur"))
		return
		;;
	--select | --extend-select | --ignore)
		_dtypelint_list "ALL $(_dtypelint_rules)"
		return
		;;
	--explain)
		COMPREPLY=($(compgen -W "$(_dtypelint_rules)" -- "$cur"))
		return
		;;
	--setup)
		COMPREPLY=($(compgen -W "$(_dtypelint_setups)" -- "$cur"))
		return
		;;
	--pick | --scan-budget | --trace | --device-memory | --max-file-size | --max-depth | --max-alias-nodes | --max-tensors | \
		--max-name-length | --max-rank | --max-header-size)
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--deepspeed --accelerate --peft --trainer-args --framework-config
			--framework-override --launch --export
			--fix-plan --diff --write --pick --wrap-plan --memory --device-memory --scan-kernels --kernels --scan-budget --plan --strategy
			--precision --with --versions-from --assume -f --format -o --output --color --statistics --show-plan
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
