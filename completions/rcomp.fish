# fish completion for rcomp-run and rcomp-view (installed for each name).

function __rcomp_sessions
    rcomp-run --list 2>/dev/null | awk 'NR > 1 { print $1 }'
end

function __rcomp_view_ssh_args
    # The ssh options and host after "ssh", as typed, once the host is given
    # (the last word that is no option, nor an option's value).
    set -l words (commandline -opc)
    set -l seen 0
    set -l takes_value 0
    set -l args
    set -l host
    for w in $words[2..-1]
        if test $seen -eq 1
            if test $takes_value -eq 1
                set -a args $w
                set takes_value 0
                continue
            end
            switch $w
                case '--' '--attach' '--stop' '--list'
                    break
                case '-b' '-c' '-D' '-E' '-e' '-F' '-I' '-i' '-J' '-L' '-l' '-m' '-O' '-o' '-p' '-Q' '-R' '-S' '-W' '-w'
                    set -a args $w
                    set takes_value 1
                case '-*'
                    set -a args $w
                case '*'
                    set -a args $w
                    set host $w
            end
        else if test "$w" = ssh
            set seen 1
        end
    end
    test -n "$host"; and string join \n -- $args
end

function __rcomp_view_ssh_host
    __rcomp_view_ssh_args >/dev/null
end

function __rcomp_view_ssh_sessions
    set -l args (__rcomp_view_ssh_args)
    test -n "$args"; or return
    ssh -o BatchMode=yes -o ConnectTimeout=3 $args rcomp-run --list 2>/dev/null | awk 'NR > 1 { print $1 }'
end

set -l compress none lz4 zstd zstd:1 zstd:3 zstd:9 zstd:19
set -l fps auto 30 60 75 120 144 165 240

# rcomp-run
complete -c rcomp-run -l name -x -d 'Name the session'
complete -c rcomp-run -l socket -r -F -d 'Listen on this unix socket'
complete -c rcomp-run -l listen-tcp -x -d 'Also listen on TCP (ADDR:PORT)'
complete -c rcomp-run -l listen-udp -x -d 'Also listen on UDP, QUIC (ADDR:PORT)'
complete -c rcomp-run -l listen-web -x -d 'Also serve the browser viewer (ADDR:PORT)'
complete -c rcomp-run -l web-cert -r -F -d 'Serve HTTPS with this certificate (PEM)'
complete -c rcomp-run -l web-key -r -F -d 'The private key of the certificate (PEM)'
complete -c rcomp-run -l token-file -r -F -d 'The TCP token is the first line of FILE'
complete -c rcomp-run -l watch-token -d 'Also write a token that admits viewers to watch only'
complete -c rcomp-run -l stall-timeout -x -a '10 30 60' -d 'Drop a viewer whose link takes nothing this long'
complete -c rcomp-run -l grace -x -a '1 3 10' -d 'Seconds from SIGTERM to SIGKILL at the session\'s end'
complete -c rcomp-run -l log-max -x -a '8 64 512' -d 'MiB a session\'s log file keeps'
complete -c rcomp-run -l stdio -d 'Speak to one viewer on stdin/stdout'
complete -c rcomp-run -l persist -d 'With --stdio: run on in the background'
complete -c rcomp-run -l offer-udp -d 'With --persist: offer UDP to a viewer over ssh'
complete -c rcomp-run -l list -d 'List the sessions'
complete -c rcomp-run -l attach -x -a '(__rcomp_sessions)' -d 'Connect stdio to a session'
complete -c rcomp-run -l stop -x -a '(__rcomp_sessions)' -d 'End a session'
complete -c rcomp-run -l fps -x -a "$fps" -d 'Frame clock of each window'
complete -c rcomp-run -l compress -x -a "$compress" -d 'Compression of lossless frames'
complete -c rcomp-run -l codec -x -a 'auto lossless video' -d 'Lossless, video or both'
complete -c rcomp-run -l motion -x -a 'rate sharpness' -d 'What video keeps when it cannot keep up'
complete -c rcomp-run -l audio -x -a 'on off pulseaudio pipewire' -d 'A sound server for the session'
complete -c rcomp-run -l files -x -a 'yes ask no' -d 'Take the files the viewers give'
complete -c rcomp-run -l file-size-limit -x -a '1024 16384 0' -d 'The largest file taken, MiB'
complete -c rcomp-run -l notifications -x -a 'on off' -d 'The apps\' notifications to the viewers'
complete -c rcomp-run -l printing -x -a 'on off' -d 'A printer for the apps'
complete -c rcomp-run -l send -d 'Send files to the viewers'
complete -c rcomp-run -l to -x -d 'With --send: that viewer only'
complete -c rcomp-run -l no-xwayland -d 'No X11 apps'
complete -c rcomp-run -l stats -d 'Print numbers each second'
complete -c rcomp-run -l dump-dir -x -a '(__fish_complete_directories)' -d 'Write the last frames here'
complete -c rcomp-run -s v -l verbose -d 'More logging'
complete -c rcomp-run -l show-config -d 'Print each setting and its source'
complete -c rcomp-run -s V -l version -d 'Show the version'
complete -c rcomp-run -s h -l help -d 'Show the options'

# rcomp-view
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l attach -x -a '(__rcomp_sessions)' -d 'A session on this host'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l list -d 'List the sessions on this host'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l socket -r -F -d 'Connect to this unix socket'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l tcp -x -d 'Connect over TCP (HOST:PORT)'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l udp -x -d 'Connect over UDP, QUIC (HOST:PORT)'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l token-file -r -F -d 'The TCP token is the first line of FILE'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l stdio -d 'Speak on stdin/stdout'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l local -d 'Start rcomp-run here'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l compress -x -a "$compress" -d 'Compression asked of rcomp-run'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l fps -x -a "$fps" -d 'Frame clock asked of rcomp-run'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l remote-bin -x -d 'rcomp-run on the remote host'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l ssh-udp -x -a 'on off' -d 'With ssh: move the session to UDP'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l app-decorations -d 'Apps draw their own title bars'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l title-host -d 'Titles begin with the remote host'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l audio -x -a 'on off' -d "Play the session's sound"
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l mic -d 'Send the microphone to the session'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l share -d 'Join beside the viewers there instead of taking over'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l view-only -d 'Join to watch only: no input'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l stats -d 'Print numbers each second'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l files -x -a 'yes ask no' -d 'Save what the session sends'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l file-size-limit -x -a '1024 16384 0' -d 'The largest file saved, MiB'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l open-files -d 'Open what the session sends once saved'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l notifications -x -a 'on off' -d 'Show the session\'s notifications here'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l print -x -a 'lp save open' -d 'What a print of the session\'s becomes'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l hud -d 'Show the numbers in a corner of each window'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l hud-key -x -a 'ctrl+alt+shift+h none' -d 'Keys that show and hide the HUD'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l hud-corner -x -a 'top-left top-right bottom-left bottom-right' -d 'Where the HUD sits'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -s v -l verbose -d 'More logging'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -l show-config -d 'Print each setting and its source'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -s V -l version -d 'Show the version'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -s h -l help -d 'Show the options'
complete -c rcomp-view -n 'not __fish_seen_subcommand_from ssh' -f -a ssh -d 'Run or attach on a host over ssh'
complete -c rcomp-view -n '__fish_seen_subcommand_from ssh; and not __rcomp_view_ssh_host' -f -a '(__fish_print_hostnames)' -d 'Host'
complete -c rcomp-view -n '__fish_seen_subcommand_from ssh; and __rcomp_view_ssh_host; and not __fish_seen_subcommand_from -- --attach --stop --list' -f -a '-- --attach --stop --list'
complete -c rcomp-view -n '__fish_seen_subcommand_from --attach --stop; and __fish_seen_subcommand_from ssh' -f -a '(__rcomp_view_ssh_sessions)' -d 'Session'
