# Workload for `cargo xtask bench-peers nytprof`: many statements and sub calls, so that
# `perl -d:NYTProf workload.pl N` writes a large profile (about 300 bytes per iteration
# uncompressed).
use strict;
use warnings;

my $n = shift || 1000;
sub leaf { my $x = shift; return $x + 1 }
sub mid {
    my $s = 0;
    for my $i (1 .. 5) { $s += leaf($i) }
    return $s;
}
my $t = 0;
for my $i (1 .. $n) {
    $t += mid($i);
    $t %= 1_000_003;
}
print "$t\n";
