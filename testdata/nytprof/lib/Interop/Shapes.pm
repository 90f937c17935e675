package Interop::Shapes;
# A module for the interop programs: methods, a closure factory, a recursive sub and a
# caller of code refs (so evals' anonymous subs are called from another file).
use strict;
use warnings;

sub new { my ($class, %args) = @_; return bless {%args}, $class }
sub area { my $self = shift; return $self->{w} * $self->{h} }
sub scaler { my $k = shift; return sub { return $_[0] * $k } }
sub depth { my $n = shift; return $n <= 0 ? 0 : 1 + depth($n - 1) }
sub apply { my ($code, @args) = @_; return $code->(@args) }

1;
