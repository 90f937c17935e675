# Interop program for profcodec-nytprof: modules, string evals defining anonymous subs,
# recursion, closures, UTF-8 sub names, a regex (slowops) and a sort block.
use strict;
use warnings;
use utf8;
use FindBin;
use lib "$FindBin::Bin/lib";
use Interop::Shapes;
use List::Util qw(sum);

sub café { return length shift }
sub 日本 { my $n = shift; return $n * 2 }

my $s = Interop::Shapes->new(w => 3, h => 4);
my $total = 0;
$total += $s->area for 1 .. 20;
my $double = Interop::Shapes::scaler(2);
$total += $double->($_) for 1 .. 10;
$total += Interop::Shapes::depth(15);

# String evals, each defining and calling an anonymous sub.
for my $i (1 .. 3) {
    my $code = eval "sub { my \$x = shift; return \$x + $i }";
    $total += $code->(10);
}
my $nested = eval q{ my $f = eval 'sub { return 7 }'; $f->() };
$total += $nested;

$total += café("naïve") + 日本(21);
my @words = sort { length($a) <=> length($b) } map { "w" x $_ } 1 .. 30;
$total += scalar grep { /ww/ } @words;
$total += sum(1 .. 100);
print "total $total\n";
