' VB lock corpus: SyncLock in subs, functions, loops, Try/Catch, lambdas, classes and shared members.
Imports System.Runtime.CompilerServices
Imports System.Threading


Public Module Program
    Private ReadOnly Gate As New Object()
    Private _count As Integer

    Public Function Main() As Integer
        Simple()
        InLoop(4)
        Console.WriteLine("vb: count " & _count)
        Console.WriteLine("vb: try/catch " & InTryCatch(False) & " " & InTryCatch(True))
        Console.WriteLine("vb: finally " & InFinally())
        Console.WriteLine("vb: nested " & Nested())
        Console.WriteLine("vb: function " & Doubled(21))
        Dim add As Action(Of Integer) = Sub(n)
                                            SyncLock Gate
                                                _count += n
                                            End SyncLock
                                        End Sub
        add(100)
        Console.WriteLine("vb: lambda count " & _count)
        Dim acct As New Account()
        acct.Deposit(30)
        acct.Deposit(12)
        Console.WriteLine("vb: account " & acct.Balance & " shared " & Account.Opened)
        Console.WriteLine("vb: synchronized " & acct.Withdraw(100) & " " & acct.Withdraw(40) & " " & acct.Balance & " " & Account.Audit())
        Console.WriteLine("vb: monitor " & Explicit())
        Try
            ThrowInside()
        Catch e As InvalidOperationException
            Console.WriteLine("vb: caught '" & e.Message & "' free " & (Not Monitor.IsEntered(Gate)).ToString())
        End Try
        Console.WriteLine("vb: done")
        Return 0
    End Function

    Private Sub Simple()
        SyncLock Gate
            _count += 1
        End SyncLock
    End Sub

    Private Sub InLoop(times As Integer)
        For i As Integer = 1 To times
            SyncLock Gate
                If i Mod 2 = 0 Then Continue For
                _count += i
            End SyncLock
        Next
    End Sub

    Private Function InTryCatch(fail As Boolean) As String
        Try
            SyncLock Gate
                If fail Then Throw New ArgumentException("failed inside")
                Return "fine"
            End SyncLock
        Catch e As ArgumentException
            SyncLock Gate
                Return e.Message
            End SyncLock
        End Try
    End Function

    Private Function InFinally() As Integer
        Dim value As Integer = 0
        Try
            value = 1
        Finally
            SyncLock Gate
                value += 1
            End SyncLock
        End Try
        Return value
    End Function

    Private Function Nested() As Integer
        Dim inner As New Object()
        SyncLock Gate
            SyncLock inner
                SyncLock Gate
                    Return 3
                End SyncLock
            End SyncLock
        End SyncLock
    End Function

    Private Function Doubled(x As Integer) As Integer
        SyncLock Gate
            Return x * 2
        End SyncLock
    End Function

    Private Function Explicit() As String
        Dim held As Integer = 0
        Monitor.Enter(Gate)
        held += 1
        Monitor.Exit(Gate)
        If Monitor.TryEnter(Gate, 100) Then
            held += 1
            Monitor.Exit(Gate)
        End If
        Return held & " of 2"
    End Function

    Private Sub ThrowInside()
        SyncLock Gate
            Throw New InvalidOperationException("thrown inside SyncLock")
        End SyncLock
    End Sub
End Module

Public Class Account
    Private Shared ReadOnly SharedGate As New Object()
    Public Shared Opened As Integer
    Private ReadOnly _gate As New Object()
    Private _balance As Integer

    Public Sub New()
        SyncLock SharedGate
            Opened += 1
        End SyncLock
    End Sub

    Public Sub Deposit(amount As Integer)
        SyncLock _gate
            _balance += amount
        End SyncLock
    End Sub

    Public ReadOnly Property Balance As Integer
        Get
            SyncLock _gate
                Return _balance
            End SyncLock
        End Get
    End Property

    ' Synchronized: the runtime locks Me around the body; two Returns through VB's return local.
    <MethodImpl(MethodImplOptions.Synchronized)>
    Public Function Withdraw(amount As Integer) As Boolean
        If amount > _balance Then Return False
        _balance -= amount
        Return True
    End Function

    ' A Shared synchronized function locks the type.
    <MethodImpl(MethodImplOptions.Synchronized)>
    Public Shared Function Audit() As String
        Return "opened " & Opened
    End Function
End Class

