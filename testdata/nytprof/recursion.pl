# Recursion shapes for crates/nytprof/tests/profile.rs: direct (fib), mutual (is_even/is_odd),
# recursion through a closure and through another sub (walk -> visit -> walk), and deep
# recursion (depth 150, past Perl's 100-level warning, which `no warnings 'recursion'` silences).
use strict;
use warnings;
no warnings 'recursion';

my $n = shift || 18;
sub fib { my $k = shift; return $k < 2 ? $k : fib($k - 1) + fib($k - 2) }
sub is_even { my $k = shift; return $k == 0 ? 1 : is_odd($k - 1) }
sub is_odd { my $k = shift; return $k == 0 ? 0 : is_even($k - 1) }
sub deep { my $k = shift; return $k == 0 ? 0 : 1 + deep($k - 1) }

my $tree = { kids => [] };
sub grow { my ($t, $d) = @_; return if $d == 0; for (1 .. 3) { my $k = { kids => [] }; push @{ $t->{kids} }, $k; grow($k, $d - 1) } }
sub visit { my ($t, $f) = @_; $f->($t); walk($_, $f) for @{ $t->{kids} } }
sub walk { my ($t, $f) = @_; visit($t, $f) }
grow($tree, 5);

my $count = 0;
my $counter = sub { $count++ };
my $total = fib($n);
$total += is_even($_) for 1 .. 200;
$total += deep(150) for 1 .. 20;
walk($tree, $counter) for 1 .. 5;
print "$total $count\n";
