# fish completion for dtypelint(1). Rule ids and names come from the installed binary
# (dtypelint --list-rules), set-up names from the config (--config FILE, else the nearest
# .dtypelint.yaml); fish completes --opt=value itself. tests/install/completions.py checks
# options and formats against --help and runs `complete -C`.
function __dtypelint_rules
    dtypelint --list-rules 2>/dev/null | awk '{ print $1; print $2 }'
    echo ALL
end

# a comma-separated list of rules: the words before the last comma kept
function __dtypelint_rule_list
    set -l token (commandline -ct | string replace -r '^--[a-z-]+=' '')
    set -l head (string match -r '^.*,' -- $token; or echo '')
    for rule in (__dtypelint_rules)
        echo $head$rule
    end
end

# the set-up names of the config: --config FILE, else the nearest .dtypelint.yaml upward
function __dtypelint_setups
    set -l words (commandline -opc)
    set -l config
    for i in (seq (count $words))
        switch $words[$i]
            case --no-config
                return
            case --config
                set config $words[(math $i + 1)]
            case '--config=*'
                set config (string replace -- --config= '' $words[$i])
        end
    end
    if test -z "$config"
        set -l dir $PWD
        while test -n "$dir"
            if test -f $dir/.dtypelint.yaml
                set config $dir/.dtypelint.yaml
                break
            end
            test "$dir" = / && break
            set dir (path dirname $dir)
        end
    end
    test -f "$config" || return
    awk '/^[^ \t#-]/ { on = ($0 ~ /^setups[ \t]*:/) }
        on { while (match($0, /name[ \t]*:[ \t]*["\047]?[^"\047,} \t]+/)) {
            v = substr($0, RSTART, RLENGTH); sub(/^name[ \t]*:[ \t]*["\047]?/, "", v)
            print v; $0 = substr($0, RSTART + RLENGTH) } }' $config 2>/dev/null
end

complete -c dtypelint -l deepspeed -r -F -d 'a DeepSpeed JSON config'
complete -c dtypelint -l accelerate -r -F -d 'an accelerate config YAML'
complete -c dtypelint -l peft -r -F -d 'a PEFT adapter_config.json'
complete -c dtypelint -l trainer-args -r -F -d 'a training recipe'
complete -c dtypelint -l framework-config -r -F -d 'a training framework config (torchtune, torchtitan)'
complete -c dtypelint -l framework-override -r -d 'a framework override KEY=VALUE'
complete -c dtypelint -l launch -r -F -d 'a launch script, read and never run'
complete -c dtypelint -l export -r -F -d 'write the composed manifest to FILE'
complete -c dtypelint -l fix-plan -d 'the fixes for each finding'
complete -c dtypelint -l write -d 'with --fix-plan: apply the top fix'
complete -c dtypelint -l pick -x -d 'with --write: apply the N-th fix'
complete -c dtypelint -l wrap-plan -d 'print FSDP2 fully_shard groups'
complete -c dtypelint -l scan-kernels -x -a '(__fish_complete_directories)' -d 'print the ops dtype contracts'
complete -c dtypelint -l kernels -x -a '(__fish_complete_directories)' -d 'use the kernels in DIR'
complete -c dtypelint -l scan-budget -x -d 'wall-clock budget of the kernel scan (seconds)'
complete -c dtypelint -l plan -r -F -d 'read the plan from FILE'
complete -c dtypelint -l strategy -x -a 'zero3 fsdp1 fsdp2 ddp single' -d 'the sharding strategy'
complete -c dtypelint -l precision -x -a 'bf16 fp16 fp32' -d 'the mixed precision'
complete -c dtypelint -l with -x -a 'torch= transformers= peft= deepspeed= accelerate= trl= bitsandbytes=' -d 'framework versions'
complete -c dtypelint -l versions-from -r -F -d 'read the framework versions from FILE'
complete -c dtypelint -l assume -x -a 'newest' -d 'lint a version range at its newest version only'
complete -c dtypelint -s f -l format -x -a 'text concise json json-lines sarif github gitlab markdown html' -d 'the report format'
complete -c dtypelint -s o -l output -r -F -d 'write the report to FILE'
complete -c dtypelint -l color -x -a 'auto always never' -d 'color the text report'
complete -c dtypelint -l statistics -d 'the number of findings per rule'
complete -c dtypelint -l show-plan -d 'print the resolved plan'
complete -c dtypelint -l trace -x -d 'the dtype history of tensors matching GLOB'
complete -c dtypelint -s q -l quiet -d 'no versions and summary lines'
complete -c dtypelint -s v -l verbose -d 'every note of each finding'
complete -c dtypelint -l select -x -a '(__dtypelint_rule_list)' -d 'run only these rules'
complete -c dtypelint -l extend-select -x -a '(__dtypelint_rule_list)' -d 'add these rules'
complete -c dtypelint -l ignore -x -a '(__dtypelint_rule_list)' -d 'do not run these rules'
complete -c dtypelint -l fail-on -x -a 'error warning info' -d 'exit 1 at or above LEVEL'
complete -c dtypelint -l exit-zero -d 'exit 0 even with findings'
complete -c dtypelint -l list-rules -d 'list the rules'
complete -c dtypelint -l explain -x -a '(__dtypelint_rules)' -d 'print a rule documentation'
complete -c dtypelint -l config -r -F -d 'read FILE instead of .dtypelint.yaml'
complete -c dtypelint -l no-config -d 'read no configuration file'
complete -c dtypelint -l setup -x -a '(__dtypelint_setups)' -d 'lint this set-up of the config'
complete -c dtypelint -l stdin-filename -r -F -d 'the name of standard input'
complete -c dtypelint -l memory -d 'print the per-rank memory of the model states'
complete -c dtypelint -l device-memory -x -d 'the memory of one device'
complete -c dtypelint -l diff -d 'with --fix-plan: print the top fix as a unified diff'
complete -c dtypelint -l baseline -r -F -d 'do not report the findings in FILE'
complete -c dtypelint -l write-baseline -r -F -d 'record every finding in FILE'
complete -c dtypelint -l max-file-size -x -d 'limit: bytes of one file'
complete -c dtypelint -l max-depth -x -d 'limit: nesting depth'
complete -c dtypelint -l max-alias-nodes -x -d 'limit: nodes through YAML aliases'
complete -c dtypelint -l max-tensors -x -d 'limit: tensors in one manifest'
complete -c dtypelint -l max-name-length -x -d 'limit: bytes of one name'
complete -c dtypelint -l max-rank -x -d 'limit: dimensions of one shape'
complete -c dtypelint -l max-header-size -x -d 'limit: bytes of a safetensors header'
complete -c dtypelint -l version -d 'print the version'
complete -c dtypelint -s h -l help -d 'print the help'
