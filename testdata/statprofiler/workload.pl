# Workload for `cargo xtask bench-peers statprofiler`: run under Devel::StatProfiler for SECONDS
# seconds, it is sampled in call stacks of 5 to 15 frames: direct and mutual recursion, 50 subs
# compiled by string evals, closures and a busy loop at the leaves.
use strict;
use warnings;
no warnings 'recursion';
use Time::HiRes qw(time);

my $seconds = shift || 10;
my @work;
for my $k (1 .. 50) {
    push @work, eval "sub { my \$s = 0; \$s += \$_ * $k for 1 .. 40; return \$s % 1009 }";
    die $@ if $@;
}
sub descend { my ($d, $i) = @_; return $d == 0 ? $work[$i % 50]->() : descend($d - 1, $i) + 1 }
sub is_even { my ($k, $i) = @_; return $k == 0 ? descend(3, $i) : is_odd($k - 1, $i) }
sub is_odd { my ($k, $i) = @_; return $k == 0 ? descend(2, $i) : is_even($k - 1, $i) }
sub step { my $i = shift; return $i % 2 ? descend(4 + $i % 8, $i) : is_even($i % 7, $i) }

my $end = time + $seconds;
my ($i, $t) = (0, 0);
while (time < $end) {
    $t = ($t + step($i++)) % 1_000_003 for 1 .. 100;
}
print "$t\n";
