# Workload for `cargo xtask bench-peers nytprof`: `perl -d:NYTProf workload.pl N` writes a large
# profile (about 300 bytes per iteration uncompressed) of the shapes a real program has: many
# subs (200 defined by string evals, so each has its own eval fid), direct and mutual recursion,
# string evals run over and over at one line (which Devel::NYTProf::Data collapses: more than
# 200 distinct sources), closures, and plain statement-heavy loops.
use strict;
use warnings;
no warnings 'recursion';

my $n = shift || 1000;
my $subs = 200;

# Many named subs, each compiled by its own string eval.
for my $k (1 .. $subs) {
    eval "sub work_$k { my \$x = shift; my \$y = \$x * $k; \$y += \$_ for 1 .. 3; return \$y % 1009 }";
    die $@ if $@;
}
my @work = map { \&{"work_$_"} } 1 .. $subs;

sub fib { my $k = shift; return $k < 2 ? $k : fib($k - 1) + fib($k - 2) }
sub is_even { my $k = shift; return $k == 0 ? 1 : is_odd($k - 1) }
sub is_odd { my $k = shift; return $k == 0 ? 0 : is_even($k - 1) }
sub leaf { my $x = shift; return $x + 1 }
sub mid {
    my $s = 0;
    for my $i (1 .. 3) { $s += leaf($i) }
    return $s;
}

my $scale = sub { my $x = shift; return $x * 3 % 1_000_003 };
my $t = 0;
for my $i (1 .. $n) {
    $t += $work[$i % $subs]->($i);
    $t += mid($i);
    $t += $scale->($t);
    $t += fib(4) if $i % 8 == 0;
    $t += is_even($i % 16) if $i % 8 == 4;
    # A distinct source every 500 iterations, the same one otherwise.
    $t += eval($i % 500 ? '$i + 1' : "$i + 2") if $i % 50 == 0;
    $t %= 1_000_003;
}
print "$t\n";
