# Interop program for profcodec-nytprof: string evals that Devel::NYTProf::Data collapses
# (collapse_evals_in): the same source evaluated many times at one line, evals defining
# anonymous subs (called from this file and from a module), evals calling subs, nested evals,
# evals with different sources at one line, and more than 200 distinct sources at one line.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use Interop::Shapes;

my $total = 0;
sub helper { return $_[0] + 1 }

# The same expression, ten times at one line.
for my $i (1 .. 10) { $total += eval '$i * 2 + helper($i)' }

# The same anonymous sub definition, five times; some called here, some from a module.
my @subs;
for (1 .. 5) { push @subs, eval 'sub { my $x = shift; return helper($x) + 1 }' }
$total += $subs[0]->(1) + $subs[1]->(2);
$total += Interop::Shapes::apply($subs[2], 3) + Interop::Shapes::apply($subs[4], 5);

# Different sources at one line: kept apart.
for my $n (1 .. 4) { $total += eval "$n + 1" }
# Two sources alternating at one line: two survivors.
for my $n (1 .. 6) { $total += eval($n % 2 ? '1 + helper(1)' : '2 + helper(2)') }

# Nested evals: the outer ones hold evals, so they are not collapsed; the inner ones are.
for (1 .. 3) { $total += eval q{ my $s = 0; $s += eval '1 + 1' for 1 .. 3; $s } }

# Sources that differ but share Data.pm's digest (length and byte sum): collapsed together.
for my $n (1 .. 205) { $total += eval "$n * 1" }

# More than 200 distinct digests at one line (every length differs): all collapsed into one.
# (Nested evals here would be collapsed too, but then nytprofhtml 6.12 dies on the profile.)
for my $n (1 .. 210) { $total += eval((' ' x $n) . '1') }

print "total $total\n";
