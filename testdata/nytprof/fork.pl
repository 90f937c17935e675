# Interop program for profcodec-nytprof: a forked child profiled into nytprof.out.<pid>.
use strict;
use warnings;

sub work { my $s = 0; $s += $_ for 1 .. shift; return $s }
my $pid = fork();
die "fork: $!" unless defined $pid;
if ($pid == 0) { print "child ", work(500), "\n"; exit 0 }
print "parent ", work(1000), "\n";
waitpid($pid, 0);
