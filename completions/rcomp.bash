# bash completion for rcomp-run and rcomp-view            -*- shell-script -*-
# Installed as completions/rcomp-run and completions/rcomp-view, so that
# bash-completion loads it for either command.

# Session names, from rcomp-run --list here, or over ssh with the ssh
# options and host given (-p, -i, -J... as typed).
_rcomp_sessions()
{
	if (($#)); then
		ssh -o BatchMode=yes -o ConnectTimeout=3 "$@" rcomp-run --list 2>/dev/null
	else
		rcomp-run --list 2>/dev/null
	fi | awk 'NR > 1 { print $1 }'
}

_rcomp_values()
{
	# The values of an option that takes one of a few; 1 if it is not one.
	case $1 in
	--compress) COMPREPLY=($(compgen -W 'none lz4 zstd zstd:1 zstd:3 zstd:9 zstd:19' -- "$cur")) ;;
	--codec) COMPREPLY=($(compgen -W 'auto lossless video' -- "$cur")) ;;
	--motion) COMPREPLY=($(compgen -W 'rate sharpness' -- "$cur")) ;;
	--ssh-udp) COMPREPLY=($(compgen -W 'on off' -- "$cur")) ;;
	--audio)
		if [[ ${COMP_WORDS[0]##*/} == rcomp-run ]]; then
			COMPREPLY=($(compgen -W 'on off pulseaudio pipewire' -- "$cur"))
		else
			COMPREPLY=($(compgen -W 'on off' -- "$cur"))
		fi
		;;
	--fps) COMPREPLY=($(compgen -W 'auto 30 60 75 120 144 165 240' -- "$cur")) ;;
	--stall-timeout) COMPREPLY=($(compgen -W '10 30 60' -- "$cur")) ;;
	--grace) COMPREPLY=($(compgen -W '1 3 10' -- "$cur")) ;;
	--log-max) COMPREPLY=($(compgen -W '8 64 512' -- "$cur")) ;;
	--files) COMPREPLY=($(compgen -W 'yes ask no' -- "$cur")) ;;
	--file-size-limit) COMPREPLY=($(compgen -W '1024 16384 0' -- "$cur")) ;;
	--notifications | --printing) COMPREPLY=($(compgen -W 'on off' -- "$cur")) ;;
	--print) COMPREPLY=($(compgen -W 'lp save open' -- "$cur")) ;;
	--to) ;;
	--hud-corner) COMPREPLY=($(compgen -W 'top-left top-right bottom-left bottom-right' -- "$cur")) ;;
	--hud-key) COMPREPLY=($(compgen -W 'ctrl+alt+shift+h none' -- "$cur")) ;;
	--socket | --token-file | --remote-bin | --web-cert | --web-key) _filedir ;;
	--dump-dir) _filedir -d ;;
	--name | --listen-tcp | --listen-udp | --listen-web | --tcp | --udp) ;;
	*) return 1 ;;
	esac
	__ltrim_colon_completions "$cur"
	return 0
}

# What every word after an option of ours completes to, or 1: the app after
# --, an option's values, the sessions after --attach.
_rcomp_common()
{
	local i
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			# The app and its own arguments.
			_command_offset $((i + 1))
			return 0
		fi
	done
	_rcomp_values "$prev" && return 0
	if [[ $prev == --attach || $prev == --stop ]]; then
		COMPREPLY=($(compgen -W "$(_rcomp_sessions)" -- "$cur"))
		return 0
	fi
	return 1
}

_rcomp_run()
{
	local cur prev words cword
	_init_completion -n : || return
	_rcomp_common && return
	COMPREPLY=($(compgen -W '--name --socket --listen-tcp --listen-udp --listen-web --web-cert
		--web-key --token-file --watch-token
		--stall-timeout --grace --log-max --stdio --persist --offer-udp --list --attach --stop --fps --compress --codec
		--motion --audio --files --file-size-limit --notifications --printing --send --to --no-xwayland --stats --dump-dir
		--verbose --show-config --version --help
		--' -- "$cur"))
}

_rcomp_view()
{
	local cur prev words cword
	_init_completion -n : || return
	local i ssh=0
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == ssh ]]; then
			ssh=$i
			break
		fi
	done
	if ((ssh)); then
		# ssh [ssh options] HOST -- APP, HOST --attach|--stop [SESSION], HOST --list
		local host= j
		local -a sshopts=()
		for ((j = ssh + 1; j < cword; j++)); do
			case ${words[j]} in
			-- | --list) return ;; # the remote app: not ours to know; or nothing
			--attach | --stop)
				COMPREPLY=($(compgen -W "$(_rcomp_sessions "${sshopts[@]}")" -- "$cur"))
				return
				;;
			-[bcDEeFIiJLlmOopQRSWw])
				# ssh options with a value: kept, to ask the same host
				sshopts+=("${words[j]}" "${words[j + 1]}")
				((j++))
				;;
			-*) sshopts+=("${words[j]}") ;;
			*)
				host=${words[j]}
				sshopts+=("$host")
				;;
			esac
		done
		if [[ $host ]]; then
			COMPREPLY=($(compgen -W '-- --attach --stop --list' -- "$cur"))
		elif [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '-p -l -i -o -J -F -v -4 -6 -A -C -X -Y' -- "$cur"))
		else
			_known_hosts_real -a -- "$cur"
		fi
		return
	fi
	_rcomp_common && return
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W '--attach --list --socket --tcp --udp --token-file --stdio --local
			--compress --fps --remote-bin --ssh-udp --app-decorations --title-host --audio --mic --share --view-only
			--stats --files --file-size-limit --open-files --notifications --print --hud --hud-key --hud-corner --verbose
			--show-config --version --help
			--' -- "$cur"))
	else
		COMPREPLY=($(compgen -W 'ssh' -- "$cur"))
	fi
}

complete -F _rcomp_run rcomp-run
complete -F _rcomp_view rcomp-view
